/**
 * A stdio server's stderr, kept as a bounded ring of its most recent lines (each line capped)
 * for status() and for the error shown when the process dies. Optionally forwarded line by line.
 * stderr is diagnostics, not an error signal (MCP: clients "SHOULD NOT assume stderr output
 * indicates error conditions").
 */
import { StringDecoder } from 'node:string_decoder';

export const MAX_STDERR_LINE_CHARS = 1_000;

export class StderrTail {
  private readonly lines: string[] = [];
  private partial = '';
  private readonly decoder = new StringDecoder('utf8');

  constructor(
    private readonly capacity: number,
    private readonly forward?: ((line: string) => void) | undefined,
  ) {}

  push(chunk: Buffer): void {
    const text = this.decoder.write(chunk);
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      this.appendPartial(text.slice(start, newline));
      this.finishLine();
      start = newline + 1;
    }
    this.appendPartial(text.slice(start));
  }

  /** The stream ended: an unterminated last line still counts. */
  end(): void {
    this.appendPartial(this.decoder.end());
    if (this.partial !== '') this.finishLine();
  }

  /** The most recent lines, oldest first (an unterminated last line included). */
  recent(): string[] {
    if (this.capacity === 0) return [];
    const partial = stripCarriageReturn(this.partial);
    return partial === '' ? [...this.lines] : [...this.lines, partial].slice(-this.capacity);
  }

  private appendPartial(text: string): void {
    if (text === '' || this.partial.length >= MAX_STDERR_LINE_CHARS) return;
    const room = MAX_STDERR_LINE_CHARS - this.partial.length;
    this.partial += text.length > room ? `${text.slice(0, room)}…` : text;
  }

  private finishLine(): void {
    const line = stripCarriageReturn(this.partial);
    this.partial = '';
    if (this.capacity > 0) {
      this.lines.push(line);
      if (this.lines.length > this.capacity) this.lines.shift();
    }
    try {
      this.forward?.(line);
    } catch {
      // a logger that throws must not take the transport down
    }
  }
}

function stripCarriageReturn(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
