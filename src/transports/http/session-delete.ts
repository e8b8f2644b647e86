/**
 * The session's DELETE (unsigned: no DPoP) through undici's public `dispatch` with a handler of
 * its own: its answer is not read, so no body stream, no AsyncResource and no `dump()` per DELETE
 * (`pool.request` makes all three). A `stop()` of 10,000 servers sends 10,000 of them, and the
 * DELETE was half of its CPU. What it answers does not matter (2xx, 404, 405 all end the session
 * for us); it settles once its answer is complete, or fails.
 *
 * Bounded like before: `headersTimeout` and `bodyTimeout` from the moment it is sent, and the
 * shared deadline (shared-deadline.ts) from the moment it is queued.
 */
import type { Pool } from 'undici';
import { sharedDeadline } from './shared-deadline.js';

type Abort = (reason?: Error) => void;

/** undici's handler interface of `dispatch` (the one json-answer.ts implements too). */
class DeleteHandler {
  private abort: Abort | undefined = undefined;
  private done = false;

  constructor(
    private readonly deadline: AbortSignal,
    private readonly settle: (error?: Error) => void,
  ) {}

  /** The deadline passed: the DELETE is aborted (undici calls onError). */
  handleEvent(): void {
    this.abort?.(this.deadline.reason as Error);
  }

  onConnect(abort: Abort): void {
    if (this.deadline.aborted) return abort(this.deadline.reason as Error);
    this.abort = abort;
    this.deadline.addEventListener('abort', this);
  }

  onHeaders(): boolean {
    return true;
  }

  onData(): boolean {
    return true;
  }

  onComplete(): void {
    this.finish();
  }

  onError(error: Error): void {
    this.finish(error);
  }

  private finish(error?: Error): void {
    if (this.done) return;
    this.done = true;
    this.deadline.removeEventListener('abort', this);
    this.settle(error);
  }
}

/** DELETEs `path` with `headers`; resolves once answered (whatever the status), rejects when it failed. */
export function sendDelete(
  pool: Pool,
  path: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const handler = new DeleteHandler(sharedDeadline(timeoutMs), (error) => (error ? reject(error) : resolve()));
    try {
      pool.dispatch({ path, method: 'DELETE', headers, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }, handler);
    } catch (error) {
      reject(error instanceof Error ? error : new Error(String(error)));
    }
  });
}
