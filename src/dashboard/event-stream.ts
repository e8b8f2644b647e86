/**
 * One browser's Server-Sent Events stream, bounded: events go straight to the socket while it
 * takes them; once it pushes back they wait in a queue of at most `maxQueuedBytes`. A reader that
 * falls further behind loses the queue (the oldest first, then all of it: what it missed is
 * superseded anyway) and gets a fresh snapshot (`resync`) once its socket drains. So a slow or
 * stalled browser costs the agent at most one queue and one socket buffer, never more.
 */
import type { ServerResponse } from 'node:http';

export interface StreamLimits {
  /** What may wait for a slow reader before it is dropped and resynced (default 1 MiB: a few frames of a thousand rows, ~280 KB each). */
  maxQueuedBytes: number;
}

export const DEFAULT_LIMITS: StreamLimits = { maxQueuedBytes: 1024 * 1024 };

/** One SSE frame: `event: <name>` and the JSON data on one line. */
export function frame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class EventStream {
  private queue: string[] = [];
  private head = 0;
  private queuedBytes = 0;
  /** The socket pushed back: events queue until 'drain'. */
  private blocked = false;
  /** Events were dropped: nothing more is queued until a snapshot replaces them. */
  private lagging = false;
  /** Events dropped so far (reported with each resync). */
  dropped = 0;
  resyncs = 0;

  constructor(
    private readonly response: ServerResponse,
    /** A fresh `snapshot` frame, for a reader that lagged. */
    private readonly snapshot: () => string,
    private readonly limits: StreamLimits = DEFAULT_LIMITS,
  ) {
    response.on('drain', () => this.flush());
  }

  /** What waits in this stream's queue now (the socket's own buffer aside). */
  get queued(): number {
    return this.queuedBytes;
  }

  get closed(): boolean {
    return this.response.destroyed || this.response.writableEnded;
  }

  send(chunk: string): void {
    if (this.closed) return;
    if (this.lagging) {
      this.dropped++;
      return;
    }
    if (!this.blocked) {
      this.blocked = !this.response.write(chunk);
      return;
    }
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    if (this.queuedBytes > this.limits.maxQueuedBytes) this.lag();
  }

  private lag(): void {
    this.dropped += this.queue.length - this.head;
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
    this.lagging = true;
  }

  private flush(): void {
    this.blocked = false;
    if (this.closed) return;
    if (this.lagging) {
      this.lagging = false;
      this.resyncs++;
      this.blocked = !this.response.write(frame('resync', { dropped: this.dropped }) + this.snapshot());
      return;
    }
    while (this.head < this.queue.length && !this.blocked) {
      const chunk = this.queue[this.head]!;
      this.queue[this.head++] = '';
      this.queuedBytes -= chunk.length;
      this.blocked = !this.response.write(chunk);
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
  }

  end(): void {
    if (!this.closed) this.response.end();
    this.queue = [];
    this.queuedBytes = 0;
  }
}
