/** handle.status() assembled from a server's runtime (src/server-status.ts). */
import { describe, expect, it } from 'vitest';
import { serverStatus, sharedStatus, type StatusSource } from '../../src/handle/status.js';

type State = ReturnType<StatusSource['view']['state']>;

/** The runtime's parts a status reads, flat: `source()` puts each where the port has it. */
interface Parts {
  config: { kind: string };
  transportKind: 'stdio' | 'http';
  transport: { hasSession: boolean; pid?: number; stderrTail?: () => string[] };
  nextAttemptAt: number | undefined;
  pending: { size: number };
  gate: { waiting: number };
  session: StatusSource['context']['session'];
  states: () => Record<string, string> | undefined;
  /** status()'s memo slot (a view's `lastStatus`, `unchanged`, `confirmed`). */
  view: { lastStatus: unknown; unchanged: () => boolean; confirmed: () => void };
}

function source(state: State, overrides: Partial<Parts> = {}): StatusSource {
  const parts: Parts = {
    config: { kind: 'command' },
    transportKind: 'stdio',
    transport: { hasSession: true, pid: 42, stderrTail: () => ['token=s3cret', 'ok'] },
    nextAttemptAt: 1_000,
    pending: { size: 5 },
    gate: { waiting: 2 },
    session: () => ({ era: 'legacy', protocolVersion: '2025-11-25', serverInfo: { name: 'files', version: '1' } }),
    states: () => undefined,
    view: { lastStatus: undefined, unchanged: () => false, confirmed: () => {} },
    ...overrides,
  };
  return {
    context: {
      name: 'files',
      config: parts.config,
      transport: { kind: parts.transportKind, ...parts.transport },
      pending: parts.pending,
      gate: parts.gate,
      authorization: { status: () => undefined },
      session: parts.session,
      redact: <T extends string | undefined>(text: T) => text?.replace('s3cret', '[redacted]') as T,
    },
    // The memo slot is the caller's object: what status() keeps there is read back from it.
    view: Object.assign(parts.view, {
      nextAttemptAt: parts.nextAttemptAt,
      state: () => state,
      lastError: () => undefined,
      states: parts.states,
    }),
    keepalive: () => ({ lastRttMs: 3, missed: 0 }),
  };
}

describe('a server status', () => {
  it('says what the session is without its id, counts requests on the wire apart from waiting ones, redacts stderr', () => {
    expect(serverStatus(source('ready'), 4)).toEqual({
      name: 'files',
      state: 'ready',
      transport: 'stdio',
      protocolVersion: '2025-11-25',
      era: 'legacy',
      serverInfo: { name: 'files', version: '1' },
      sessionId: '[redacted]',
      restarts: 4,
      lastError: undefined,
      nextAttemptAt: undefined,
      keepalive: { lastRttMs: 3, missed: 0 },
      requests: { inFlight: 3, waiting: 2, throttled: 0 },
      pid: 42,
      stderrTail: ['token=[redacted]', 'ok'],
      auth: undefined,
    });
  });

  it('names the next attempt only while failed', () => {
    expect(serverStatus(source('failed'), 0).nextAttemptAt).toBe(1_000);
    expect(serverStatus(source('connecting'), 0).nextAttemptAt).toBeUndefined();
  });

  it('has no session id without a session or without one on the transport; no stderr for URL servers', () => {
    expect(serverStatus(source('ready', { session: () => undefined }), 0).sessionId).toBeUndefined();
    const stateless = source('ready', { transport: { hasSession: false }, config: { kind: 'url' } });
    expect(serverStatus(stateless, 0)).toMatchObject({ sessionId: undefined, stderrTail: undefined, pid: undefined });
  });

  it("a handle's status builds no memo (an idle connection read once keeps none); one sup.status() built is used", () => {
    const view = { lastStatus: undefined as unknown, unchanged: () => false, confirmed: () => {} };
    const states = () => ({ connection: 'ready' });
    const url = source('ready', { config: { kind: 'url' }, transportKind: 'http', view, states });
    expect(serverStatus(url, 0).state).toBe('ready');
    expect(view.lastStatus).toBeUndefined();
    const shared = sharedStatus(url, () => 0);
    expect(view.lastStatus).toBe(shared);
    expect(serverStatus(url, 0)).toEqual({ ...shared, states: { connection: 'ready' } });
  });

  it('sup.status() keeps only the frozen status: the same object while it reads the same, a new one when a counter moves', () => {
    let moved = false;
    const view = { lastStatus: undefined as unknown, unchanged: () => !moved, confirmed: () => (moved = false) };
    const pending = { size: 0 };
    const session = {
      era: 'legacy',
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'files', version: '1' },
    } as const;
    const url = source('ready', {
      config: { kind: 'url' },
      transportKind: 'http',
      view,
      pending,
      gate: { waiting: 0 },
      session: () => session,
    });
    const first = sharedStatus(url, () => 0);
    expect(Object.isFrozen(first) && Object.isFrozen(first.requests)).toBe(true);
    expect(sharedStatus(url, () => 0)).toBe(first);
    // A machine moved but the status reads the same (a keepalive step): the object is kept.
    moved = true;
    expect(sharedStatus(url, () => 0)).toBe(first);
    pending.size = 2;
    const busy = sharedStatus(url, () => 0);
    expect(busy).not.toBe(first);
    expect(busy.requests).toEqual({ inFlight: 2, waiting: 0, throttled: 0 });
    expect(sharedStatus(url, () => 0)).toBe(busy);
  });

  it('never counts fewer than zero requests in flight', () => {
    expect(serverStatus(source('ready', { pending: { size: 1 }, gate: { waiting: 2 } }), 0).requests).toEqual({
      inFlight: 0,
      waiting: 2,
      throttled: 0,
    });
  });
});
