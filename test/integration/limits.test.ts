/**
 * Backpressure and limits per server (issue #28 items 3 and 4), against the HTTP fixture: a 429
 * or 503 answer holds the request and everything after it for the Retry-After window (nothing
 * is sent meanwhile), then sends them in order; `maxInFlight`, `maxQueuedRequests` while ready and
 * `rateLimit`. The windows and the token waits run on hand-fired timers: a test reads the delay
 * asked for and decides when it ends.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  connect,
  createSupervisor,
  QueueFullError,
  ServerBusyError,
  type BackpressureEvent,
  type ServerHandle,
} from '../../src/index.js';
import type { HttpFixture, RecordedRequest } from '../../servers/http-fixture.js';
import { startHttpFixture } from '../../servers/http-fixture.js';
import { Cleanup, gets, ManualTimers, open, posts, rejection } from '../transports/helpers.js';

let f: HttpFixture;
const cleanup = new Cleanup();
beforeAll(async () => {
  f = await startHttpFixture();
});
afterAll(() => f.close());
beforeEach(() => {
  for (const key of Object.keys(f.faults)) delete (f.faults as Record<string, unknown>)[key];
  f.requests.length = 0;
  f.concurrency.peak = 0;
});
afterEach(() => cleanup.run());

const calls = (): RecordedRequest[] => posts(f.requests, 'tools/call') as RecordedRequest[];
const texts = (): string[] => calls().map((r) => String(r.body?.params?.arguments?.text));

async function openWith(config: Record<string, unknown> = {}) {
  const timers = new ManualTimers();
  const { handle } = await open(cleanup, f.url, config, { timers });
  const pressure: BackpressureEvent[] = [];
  handle.on('backpressure', (event) => pressure.push(event));
  return { handle, timers, pressure };
}

/** The window's timer now (a later 429 moves the window: its timer is set again). */
function windowTimer(timers: ManualTimers): { ms: number; fire(): void } {
  const entry = timers.scheduled.findLast((e) => !e.cleared && !e.fired)!;
  return {
    ms: entry.ms,
    fire: () => {
      entry.fired = true;
      entry.fn();
    },
  };
}

/** Every call answered 429/503 is held: nothing on the wire, `n` waiting. */
async function allHeld(handle: ServerHandle, n: number): Promise<void> {
  await expect.poll(() => handle.status().requests.throttled).toBe(n);
  expect(handle.status().requests.inFlight).toBe(0);
}

describe('429 and 503 are backpressure', () => {
  it('holds a burst of 100 calls answered 429 (Retry-After: 2) and everything after them: 0 requests reach the server in the window', async () => {
    const { handle, timers, pressure } = await openWith();
    f.faults.busy = { status: 429, retryAfter: '2' };
    const burst = Array.from({ length: 100 }, (_, i) => handle.callTool('echo', { text: `call ${i}` }));
    await allHeld(handle, 100);
    const window = windowTimer(timers);
    expect(window.ms).toBeGreaterThan(1_800);
    expect(window.ms).toBeLessThanOrEqual(2_000);
    const reached = calls().length;
    expect(reached).toBe(100);
    // Asked during the window: it waits too, and the keepalive stays quiet.
    const late = handle.callTool('echo', { text: 'late' });
    await allHeld(handle, 101);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls().length).toBe(reached);
    expect(pressure[0]).toMatchObject({ server: 'fx', phase: 'hold', status: 429 });
    expect(handle.status().backpressure).toMatchObject({ held: 100, retried: 0 });
    expect(handle.status().backpressure!.until).toBeGreaterThan(Date.now());

    f.faults.busy = undefined;
    window.fire();
    const answers = await Promise.all([...burst, late]);
    expect(answers.map((a) => a.content[0]!.text)).toEqual([
      ...Array.from({ length: 100 }, (_, i) => `call ${i}`),
      'late',
    ]);
    expect(calls().length).toBe(201);
    expect(handle.status().backpressure).toEqual({ held: 100, retried: 100, until: undefined });
    expect(pressure.at(-1)).toMatchObject({ phase: 'resume', held: 100 });
  });

  it('reads Retry-After as an HTTP date', async () => {
    const { handle, timers } = await openWith();
    f.faults.busy = { status: 429, retryAfter: new Date(Date.now() + 3_000).toUTCString() };
    const call = handle.callTool('echo', { text: 'dated' });
    await allHeld(handle, 1);
    const window = await timers.nth(0);
    expect(window.ms).toBeGreaterThan(1_000); // the date has whole seconds
    expect(window.ms).toBeLessThanOrEqual(3_000);
    f.faults.busy = undefined;
    window.fire();
    expect((await call).content[0]!.text).toBe('dated');
  });

  it('caps Retry-After at maxRetryAfterMs', async () => {
    const { handle, timers } = await openWith({ maxRetryAfterMs: 1_500 });
    f.faults.busy = { status: 429, retryAfter: '3600' };
    const call = handle.callTool('echo', { text: 'capped' });
    const window = await timers.nth(0);
    expect(window.ms).toBeGreaterThan(1_400);
    expect(window.ms).toBeLessThanOrEqual(1_500);
    f.faults.busy = undefined;
    window.fire();
    expect((await call).content[0]!.text).toBe('capped');
  });

  it('treats 503 the same, and without Retry-After waits the backoff: one step per window, growing while the server stays busy', async () => {
    const { handle, timers, pressure } = await openWith({
      restart: { backoff: { initialMs: 100, factor: 2, jitter: 0 } },
    });
    f.faults.busy = { status: 503 };
    const made = Array.from({ length: 3 }, (_, i) => handle.callTool('echo', { text: `unavailable ${i}` }));
    await allHeld(handle, 3); // three answers, one window
    const first = windowTimer(timers);
    expect(first.ms).toBeLessThanOrEqual(100);
    expect(first.ms).toBeGreaterThan(50);
    first.fire(); // still busy: answered 503 again
    await expect.poll(() => handle.status().backpressure?.held).toBe(6);
    const second = windowTimer(timers);
    expect(second.ms).toBeGreaterThan(150);
    expect(second.ms).toBeLessThanOrEqual(200);
    f.faults.busy = undefined;
    second.fire();
    const answers = await Promise.all(made);
    expect(answers.map((a) => a.content[0]!.text)).toEqual(['unavailable 0', 'unavailable 1', 'unavailable 2']);
    expect(calls().length).toBe(9);
    expect(pressure[0]).toMatchObject({ phase: 'hold', status: 503 });
    expect(handle.status().backpressure).toMatchObject({ held: 6, retried: 6 });
  });

  it('fails a call whose timeout ends inside the window with ServerBusyError, at once', async () => {
    const { handle } = await openWith();
    f.faults.busy = { status: 429, retryAfter: '30' };
    const error = await rejection(handle.callTool('echo', { text: 'short' }, { timeoutMs: 2_000 }));
    expect(error).toBeInstanceOf(ServerBusyError);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 30_000, retryable: true });
    expect(error.message).toContain('Retry-After: 30 s');
  });

  it('returns a 200 that says "rate limited" as the answer it is', async () => {
    const { handle } = await openWith();
    const answer = await handle.callTool('echo', { text: 'rate limited, try later' });
    expect(answer.content[0]!.text).toBe('rate limited, try later');
    expect(handle.status().backpressure).toMatchObject({ held: 0, retried: 0 });
  });
});

describe('a 429 to the handshake or to the listening stream is backpressure too', () => {
  /** The Retry-After window's timer (2 s asked), once it is set. */
  async function windowOf(timers: ManualTimers): Promise<{ ms: number; fire(): void }> {
    await expect.poll(() => timers.scheduled.some((e) => !e.fired && !e.cleared && e.ms > 1_500)).toBe(true);
    const entry = timers.scheduled.find((e) => !e.fired && !e.cleared && e.ms > 1_500)!;
    return {
      ms: entry.ms,
      fire: () => {
        entry.fired = true;
        entry.fn();
      },
    };
  }
  const sent = (): string[] => f.requests.map((r) => (r.method === 'GET' ? 'GET' : (r.rpcMethod ?? r.method)));

  it.each([
    ['initialize', 'legacy'],
    ['server/discover', undefined],
  ] as const)(
    'a 429 (Retry-After: 2) to %s holds the handshake for the window: nothing reaches the server, no restart, no era guessed',
    async (what, protocolVersion) => {
      const timers = new ManualTimers();
      f.faults.busyFor = { what, times: 1, status: 429, retryAfter: '2' };
      const connecting = connect({ url: f.url, protocolVersion, keepalive: false }, { name: 'fx', timers });
      const window = await windowOf(timers);
      expect(window.ms).toBeGreaterThan(1_800);
      expect(window.ms).toBeLessThanOrEqual(2_000);
      const answered = f.requests.length;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(f.requests.length, 'nothing is sent during the window').toBe(answered);
      window.fire();
      const handle = cleanup.add(await connecting, (h) => h.close());
      const status = handle.status();
      expect(status.state).toBe('ready');
      expect(status.restarts, 'not a failure: no restart').toBe(0);
      expect(status.lastError).toBeUndefined();
      expect(status.backpressure).toMatchObject({ held: 1, retried: 1, until: undefined });
      // Sent again after the window, not taken for a 2025-era answer.
      expect(sent().slice(0, 3)).toEqual(
        what === 'initialize'
          ? ['initialize', 'initialize', 'notifications/initialized']
          : ['server/discover', 'server/discover', 'initialize'],
      );
      expect((await handle.callTool('echo', { text: 'after' })).content[0]!.text).toBe('after');
    },
  );

  it('a 429 (Retry-After: 2) to the listening GET holds the server for the window: calls wait, the stream opens after it, no restart', async () => {
    const timers = new ManualTimers();
    f.faults.busyFor = { what: 'GET', times: 1, status: 429, retryAfter: '2' };
    // A short listener open wait (requestTimeoutMs caps it): the connection serves while the stream waits.
    const handle = cleanup.add(
      await connect(
        { url: f.url, protocolVersion: 'legacy', keepalive: false, requestTimeoutMs: 200 },
        { name: 'fx', timers },
      ),
      (h) => h.close(),
    );
    const window = await windowOf(timers);
    const call = handle.callTool('echo', { text: 'held' }, { timeoutMs: 30_000 });
    await expect.poll(() => handle.status().requests.throttled).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls(), 'no call reaches the server during the window').toHaveLength(0);
    expect(gets(f.requests), 'the stream is not reopened during it').toHaveLength(1);
    window.fire();
    expect((await call).content[0]!.text).toBe('held');
    await expect.poll(() => f.getStreamCount()).toBe(1);
    expect(gets(f.requests)).toHaveLength(2);
    expect(handle.status()).toMatchObject({ state: 'ready', restarts: 0, lastError: undefined });
    expect(handle.status().backpressure).toMatchObject({ held: 1 });
  });
});

describe('limits per server', () => {
  it('maxInFlight: at most that many on the wire, every call answered', async () => {
    const { handle } = await openWith({ maxInFlight: 2 });
    f.faults.delayMs = 20;
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => handle.callTool('echo', { text: `${i}` })));
    expect(answers.map((a) => a.content[0]!.text)).toEqual(['0', '1', '2', '3', '4', '5']);
    expect(f.concurrency.peak).toBe(2);
    expect([...texts()].sort()).toEqual(['0', '1', '2', '3', '4', '5']);
  });

  // With two in flight, two requests sent in one turn take two sockets and may land in either
  // order; one at a time, the server sees the order in which they were sent.
  it('maxInFlight: the waiting calls are sent in the order they were made', async () => {
    const { handle } = await openWith({ maxInFlight: 1 });
    f.faults.delayMs = 5;
    await Promise.all(Array.from({ length: 6 }, (_, i) => handle.callTool('echo', { text: `${i}` })));
    expect(f.concurrency.peak).toBe(1);
    expect(texts()).toEqual(['0', '1', '2', '3', '4', '5']);
  });

  it('maxQueuedRequests bounds the queue while ready too: QueueFullError, the others answered', async () => {
    const { handle } = await openWith({ maxInFlight: 1, maxQueuedRequests: 2 });
    f.faults.delayMs = 20;
    const made = Array.from({ length: 4 }, (_, i) => handle.callTool('echo', { text: `${i}` }));
    const settled = await Promise.allSettled(made);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    const error: unknown = (settled[3] as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(QueueFullError);
    expect((error as QueueFullError).message).toContain('2 requests are already waiting for the server');
  });

  it('rateLimit: burst at once, then one per token', async () => {
    const { handle, timers } = await openWith({ rateLimit: { perSecond: 20, burst: 2 } });
    const made = Array.from({ length: 5 }, (_, i) => handle.callTool('echo', { text: `${i}` }));
    await expect.poll(() => handle.status().requests.throttled).toBe(3);
    const wait = await timers.nth(0);
    expect(wait.ms).toBeGreaterThan(0);
    expect(wait.ms).toBeLessThanOrEqual(50);
    // Fire each token wait as it comes (real time passes for the bucket meanwhile).
    let fired = 0;
    await expect
      .poll(() => {
        for (const entry of timers.scheduled) {
          if (entry.fired || entry.cleared) continue;
          entry.fired = true;
          entry.fn();
        }
        fired = timers.scheduled.length;
        return handle.status().requests.throttled;
      })
      .toBe(0);
    expect(fired).toBeGreaterThanOrEqual(2);
    expect((await Promise.all(made)).map((a) => a.content[0]!.text)).toEqual(['0', '1', '2', '3', '4']);
    expect(texts()).toEqual(['0', '1', '2', '3', '4']);
  });

  it('rejects a bad limit with a ConfigError naming the field', async () => {
    await expect(open(cleanup, f.url, { maxInFlight: 0 })).rejects.toThrow(/servers\.fx\.maxInFlight/);
    await expect(open(cleanup, f.url, { rateLimit: { perSecond: 0 } })).rejects.toThrow(
      /servers\.fx\.rateLimit\.perSecond/,
    );
    await expect(open(cleanup, f.url, { rateLimit: { perSecnd: 3 } } as never)).rejects.toThrow(
      /servers\.fx\.rateLimit/,
    );
  });
});

describe('a server busy through the whole handshake: connect() and start() settle within the request timeout', () => {
  // A short bound, a short backoff: busy answers without Retry-After wait 100, 200, 400 ms …
  const quick = {
    requestTimeoutMs: 600,
    keepalive: false,
    restart: { backoff: { initialMs: 100, maxMs: 1_000 } },
  } as const;

  it.each([undefined, 'legacy'] as const)(
    'every POST answered 503 without Retry-After (era %s): connect() rejects with a ServerBusyError naming it',
    async (protocolVersion) => {
      f.faults.busyFor = { what: 'POST', times: Infinity, status: 503 };
      const error = await rejection(connect({ url: f.url, protocolVersion, ...quick }, { name: 'fx' }));
      expect(error).toBeInstanceOf(ServerBusyError);
      const busy = error as ServerBusyError;
      expect(busy.status).toBe(503);
      expect(busy.retryAfterMs).toBeUndefined();
      expect(busy.waitMs).toBeGreaterThan(0);
      expect(busy.message).toMatch(
        /\[fx\] the server is busy \(HTTP 503, no Retry-After\).*600 ms \(requestTimeoutMs\)/,
      );
      expect(posts(f.requests, 'initialize').length + posts(f.requests, 'server/discover').length).toBeGreaterThan(1);
    },
  );

  it('429 with Retry-After: 3600 to the handshake: connect() rejects at once with the wait it asked for', async () => {
    f.faults.busyFor = { what: 'POST', times: Infinity, status: 429, retryAfter: '3600' };
    const error = await rejection(connect({ url: f.url, protocolVersion: 'legacy', ...quick }, { name: 'fx' }));
    expect(error).toBeInstanceOf(ServerBusyError);
    expect(error).toMatchObject({ status: 429, retryAfterMs: 3_600_000 });
    // The wait the client keeps: the Retry-After capped by maxRetryAfterMs (60 s by default).
    expect((error as ServerBusyError).waitMs).toBeLessThanOrEqual(60_000);
    expect(error.message).toMatch(/Retry-After 3600000 ms/);
    expect(posts(f.requests, 'initialize'), 'nothing more is sent inside the window').toHaveLength(1);
  });

  it('start() settles with the server reconnecting and saying busy; no restart budget spent; ready once the server serves', async () => {
    f.faults.busyFor = { what: 'POST', times: 3, status: 429, retryAfter: '1' };
    const sup = createSupervisor({
      servers: {
        fx: {
          url: f.url,
          protocolVersion: 'legacy',
          ...quick,
          restart: { maxRestarts: 1, backoff: { initialMs: 100 } },
        },
      },
    });
    cleanup.add(sup, (s) => s.stop());
    await sup.start();
    const status = sup.status().fx!;
    expect(status.state, 'not a handshake state while it waits').toBe('reconnecting');
    expect(status.lastError).toMatch(/the server is busy \(HTTP 429, Retry-After 1000 ms\)/);
    const call = sup.server('fx').callTool('echo', { text: 'after the wait' }, { timeoutMs: 20_000 });
    expect((await call).content[0]!.text).toBe('after the wait');
    // Three busy attempts with a budget of one restart: none was counted as a failure.
    expect(sup.status().fx).toMatchObject({ state: 'ready', lastError: undefined });
  });
});

describe('the draft rate-limit error -32023 is backpressure too', () => {
  it('a -32023 with data.retryAfterMs holds the call for that window, then sends it again', async () => {
    const { handle, timers } = await openWith();
    f.faults.rateLimitedFor = { what: 'tools/call', times: 1, retryAfterMs: 2_000 };
    const call = handle.callTool('echo', { text: 'limited' });
    await allHeld(handle, 1);
    const window = windowTimer(timers);
    expect(window.ms).toBeGreaterThan(1_800);
    expect(window.ms).toBeLessThanOrEqual(2_000);
    window.fire();
    expect((await call).content[0]!.text).toBe('limited');
    expect(texts(), 'refused once, answered once').toEqual(['limited', 'limited']);
    expect(handle.status().backpressure).toMatchObject({ held: 1, retried: 1 });
  });
});
