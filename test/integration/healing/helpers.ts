/** Shared by the healing tests: fast restart settings, a client that noticed a close, every call settled. */
import { connect, type ServerHandle, type TransitionEvent } from '../../../src/index.js';
import type { Cleanup } from '../../transports/helpers.js';

/** Restarts every 20-200 ms, no jitter: a child process restarting (~1 s) fits in the budget. */
export const FAST_RESTART = {
  maxRestarts: 100,
  withinMs: 60_000,
  provenAfterMs: 60_000,
  backoff: { initialMs: 20, maxMs: 200, factor: 2, jitter: 0 },
};

/**
 * The client learns that the server closed its keep-alive sockets on its next turn of the event
 * loop. A call written in the same tick as the close goes out on a dead socket: its outcome is
 * unknown (the server may have read it before it died), which is a different test.
 */
export function clientNoticesClose(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

type HttpConfig = Exclude<Parameters<typeof connect>[0], { command: string }>;

/** connect() with fast restarts and no keepalive unless asked; closed after the test; transitions recorded. */
export async function connectTo(
  cleanup: Cleanup,
  url: string,
  config: Partial<HttpConfig> = {},
): Promise<{ handle: ServerHandle; transitions: TransitionEvent[] }> {
  const handle = await connect(
    { url, restart: FAST_RESTART, keepalive: false, requestTimeoutMs: 10_000, ...config },
    { name: 'healing' },
  );
  cleanup.add(handle, (h) => h.close());
  const transitions: TransitionEvent[] = [];
  handle.on('transition', (event) => transitions.push(event));
  return { handle, transitions };
}

/** `from->to` of each transition, for asserting paths. */
export function path(transitions: readonly TransitionEvent[]): string[] {
  return transitions.map((t) => `${t.from}->${t.to}`);
}

/** How each call settled: its text, or the name of its error. Never hangs past the calls' own timeouts. */
export async function outcomes(calls: ReadonlyArray<Promise<{ content: Array<Record<string, unknown>> }>>) {
  const settled = await Promise.allSettled(calls);
  return settled.map((s) =>
    s.status === 'fulfilled' ? String(s.value.content[0]?.['text']) : (s.reason as Error).constructor.name,
  );
}
