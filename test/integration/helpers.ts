/** Small helpers for lifecycle tests: waiting on events (never on the clock). */
import { createServer } from 'node:net';
import type { ServerHandle, Supervisor, TransitionEvent } from '../../src/index.js';
import type { HttpFixture } from '../../servers/http-fixture.js';

type Emits = Pick<ServerHandle, 'on'> | Pick<Supervisor, 'on'>;

/** Resolves with the first transition matching `predicate` (already-seen ones do not count). */
export function nextTransition(
  source: Emits,
  predicate: (event: TransitionEvent) => boolean,
  timeoutMs = 10_000,
): Promise<TransitionEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error('no matching transition in time'));
    }, timeoutMs);
    const off = (source.on as (event: 'transition', listener: (event: TransitionEvent) => void) => () => void)(
      'transition',
      (event) => {
        if (!predicate(event)) return;
        clearTimeout(timer);
        off();
        resolve(event);
      },
    );
  });
}

/** Records every transition of a handle or supervisor as `from->to`. */
export function recordTransitions(source: Emits): TransitionEvent[] {
  const seen: TransitionEvent[] = [];
  (source.on as (event: 'transition', listener: (event: TransitionEvent) => void) => () => void)(
    'transition',
    (event) => seen.push(event),
  );
  return seen;
}

/** A URL on 127.0.0.1 where nothing listens. */
export async function refusingUrl(path = '/mcp'): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}${path}`;
}

export function rpcPosts(fixture: HttpFixture, rpcMethod?: string) {
  return fixture.requests.filter((r) => r.method === 'POST' && (rpcMethod === undefined || r.rpcMethod === rpcMethod));
}

/** Fast, deterministic restarts for tests that exercise the restart path. */
export const quickRestart = (maxRestarts: number) => ({
  maxRestarts,
  withinMs: 60_000,
  provenAfterMs: 60_000,
  backoff: { initialMs: 10, maxMs: 20, factor: 2, jitter: 0 },
});
