/**
 * Newline-delimited framing for stdio (MCP: "messages are delimited by newlines"). Works on
 * bytes so a line is bounded before it is decoded: a line longer than `maxLineBytes` is reported
 * once and discarded up to the next newline, so memory stays bounded whatever the peer writes.
 * A trailing `\r` is stripped; blank lines are skipped.
 */

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export interface LineHandlers {
  onLine(line: string): void;
  /** A line passed the limit; `bytes` is how much of it was seen when it did. */
  onOversize(bytes: number): void;
}

export class LineReader {
  private parts: Buffer[] = [];
  private size = 0;
  private discarding = false;

  constructor(
    private readonly maxLineBytes: number,
    private readonly handlers: LineHandlers,
  ) {}

  /** True while an oversized line is being skipped. */
  get skipping(): boolean {
    return this.discarding;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start <= chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (end > start) this.append(chunk.subarray(start, end));
      if (newline === -1) return;
      this.finishLine();
      start = newline + 1;
    }
  }

  /** End of input: a last line without a newline still counts. */
  end(): void {
    if (this.size > 0 || this.discarding) this.finishLine();
  }

  private append(piece: Buffer): void {
    if (this.discarding) return;
    // Allow one more byte for a `\r` before the newline.
    if (this.size + piece.length > this.maxLineBytes + 1) {
      const seen = this.size + piece.length;
      this.parts = [];
      this.size = 0;
      this.discarding = true;
      this.handlers.onOversize(seen);
      return;
    }
    this.parts.push(piece);
    this.size += piece.length;
  }

  private finishLine(): void {
    if (this.discarding) {
      this.discarding = false;
      return;
    }
    const bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    let length = bytes.length;
    if (length > 0 && bytes[length - 1] === CARRIAGE_RETURN) length--;
    if (length > this.maxLineBytes) {
      this.handlers.onOversize(length);
      return;
    }
    if (length === 0) return;
    const line = bytes.toString('utf8', 0, length);
    if (line.trim() === '') return;
    this.handlers.onLine(line);
  }
}
