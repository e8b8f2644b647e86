/**
 * Never a storm (issue 28), fast versions on real servers: the connections to one origin take one
 * attempt per backoff slot between them while it is down (the others wait for its verdict), the
 * backoff is capped while callers wait, every call settles; a flapping origin, a black hole (accepts
 * TCP, never answers) and a wrong path. Short backoffs here; the wall-clock 20 s outage of 200
 * servers is test/soak/origin-outage.soak.test.ts, the recovery figures bench/recovery.ts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../../../servers/http-fixture.js';
import { startOriginSwitch, type OriginSwitch } from '../../../servers/origin-switch.js';
import {
  connect,
  createSupervisor,
  EndpointNotFoundError,
  RequestTimeoutError,
  type CallEvent,
  type Supervisor,
} from '../../../src/index.js';
import { Cleanup } from '../../transports/helpers.js';
import { clientNoticesClose } from './helpers.js';

/** Caps the backoff at 200 ms while callers wait; idle servers would back off up to 2 s. */
const RESTART = {
  maxRestarts: 1_000,
  withinMs: 60_000,
  provenAfterMs: 60_000,
  backoff: { initialMs: 100, maxMs: 2_000, factor: 2, jitter: 0 },
  waitingReconnectMs: 200,
};

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

let fixture: HttpFixture;
let front: OriginSwitch;
beforeAll(async () => {
  fixture = await startHttpFixture();
  front = await startOriginSwitch({ port: Number(new URL(fixture.url).port) });
});
afterAll(async () => {
  await front.close();
  await fixture.close();
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `count` servers on the front's origin (one URL: the origin is what they share). */
async function supervise(count: number): Promise<{ sup: Supervisor; attempts: number[] }> {
  const servers = Object.fromEntries(
    Array.from({ length: count }, (_, i) => [
      `s${i}`,
      { url: `${front.origin}/mcp`, keepalive: false as const, restart: RESTART, requestTimeoutMs: 10_000 },
    ]),
  );
  const sup = cleanup.add(createSupervisor({ servers }), (s) => s.stop());
  await sup.start();
  const attempts: number[] = [];
  const readyErrors: Array<string | undefined> = [];
  sup.on('transition', (t) => {
    if (t.to === 'connecting' && t.from !== null) attempts.push(Date.now());
    if (t.to === 'ready') readyErrors.push(sup.server(t.server).status().lastError);
  });
  cleanup.add(readyErrors, (errors) =>
    expect(errors, 'inside a transition listener, ready has cleared lastError').toEqual(errors.map(() => undefined)),
  );
  return { sup, attempts };
}

function callAll(sup: Supervisor, count: number, callers: number): Promise<unknown[]> {
  const calls: Array<Promise<unknown>> = [];
  for (let i = 0; i < count; i++)
    for (let c = 0; c < callers; c++)
      calls.push(
        sup
          .server(`s${i}`)
          .callTool('echo', { text: `${i}.${c}` }, { timeoutMs: 10_000 })
          .then((r) => String(r.content[0]?.['text'])),
      );
  return Promise.all(calls);
}

describe('reconnects coordinated per origin', () => {
  it('20 servers on one origin down for 1.5 s with 3 callers each: one attempt per slot, every call answered when it is back', async () => {
    const { sup, attempts } = await supervise(20);
    await front.set('down');
    await clientNoticesClose();
    const calls = callAll(sup, 20, 3);
    await sleep(1_500);
    const duringOutage = attempts.length;
    await front.set('up');
    const answers = await calls;
    expect(answers).toHaveLength(60);
    expect(answers[0]).toBe('0.0');
    // Uncoordinated, each of the 20 would try about every 100-200 ms: 150 attempts or more. One
    // per slot of at most 200 ms (full jitter) is about 15; 40 leaves room for a loaded machine.
    expect(duringOutage, `attempts during the outage: ${duringOutage}`).toBeLessThanOrEqual(40);
    expect(duringOutage).toBeGreaterThan(0);
    for (const status of Object.values(sup.status())) expect(status.state).toBe('ready');
  });

  it('an origin flapping every 100 ms: every call settles, attempts stay bounded, and all end ready', async () => {
    const { sup, attempts } = await supervise(5);
    const calls = callAll(sup, 5, 2).then(
      () => 'answered',
      (error: Error) => error.constructor.name,
    );
    for (let flip = 0; flip < 10; flip++) {
      await front.set(flip % 2 === 0 ? 'down' : 'up');
      await sleep(100);
    }
    await front.set('up');
    // Calls either go through between flaps or wait and are answered; a call broken mid-way
    // (not safe to repeat) fails with a typed error: either way each settles.
    expect(['answered', 'OutcomeUnknownError']).toContain(await calls);
    expect(attempts.length, `attempts while flapping: ${attempts.length}`).toBeLessThanOrEqual(40);
    await expect.poll(() => Object.values(sup.status()).every((s) => s.state === 'ready')).toBe(true);
  });
});

describe('lastError seen from a transition listener', () => {
  it('when ready fires after an outage, status().lastError read inside the listener is already cleared (it was set while down)', async () => {
    const handle = cleanup.add(
      await connect({ url: `${front.origin}/mcp`, keepalive: false, restart: RESTART, requestTimeoutMs: 10_000 }),
      (h) => h.close(),
    );
    const seen: Array<[string, string | undefined]> = [];
    handle.on('transition', (t) => seen.push([t.to, handle.status().lastError]));
    await front.set('down');
    cleanup.add(front, (f) => f.set('up'));
    await clientNoticesClose();
    const call = handle.callTool('echo', { text: 'after the outage' }, { timeoutMs: 10_000 });
    await expect.poll(() => seen.some(([to, error]) => to === 'reconnecting' && error !== undefined)).toBe(true);
    await front.set('up');
    expect((await call).content[0]!['text']).toBe('after the outage');
    const ready = seen.filter(([to]) => to === 'ready');
    expect(ready.length).toBeGreaterThan(0);
    expect(ready, 'ready: the old failure is gone inside the listener').toEqual(ready.map(() => ['ready', undefined]));
  });
});

describe('a cold start with the origin down', () => {
  it('20 servers started while their origin is down: the first attempts take one turn per slot too, start() settles, all end ready when it is back', async () => {
    // An origin of its own, not heard from yet in this process (the shared one has answered).
    const cold = cleanup.add(await startOriginSwitch({ port: Number(new URL(fixture.url).port) }), (f) => f.close());
    await cold.set('down');
    const servers = Object.fromEntries(
      Array.from({ length: 20 }, (_, i) => [
        `s${i}`,
        { url: `${cold.origin}/mcp`, keepalive: false as const, restart: RESTART, requestTimeoutMs: 10_000 },
      ]),
    );
    const sup = cleanup.add(createSupervisor({ servers }), (s) => s.stop());
    // An attempt that knocks opens its transport and sends `server/discover`; one that took the
    // scout's verdict goes from `connecting` to `reconnecting` without discovering.
    let knocks = 0;
    sup.on('transition', (t) => {
      if (t.to === 'discovering') knocks++;
    });
    await sup.start();
    expect(knocks, "start() settled on the scout's verdict: one knock").toBe(1);
    for (const status of Object.values(sup.status())) expect(status.state).not.toBe('ready');
    const calls = callAll(sup, 20, 2);
    await sleep(1_000);
    const duringOutage = knocks;
    await cold.set('up');
    expect(await calls).toHaveLength(40);
    // Uncoordinated, 20 first attempts at once and then each server every 100-200 ms: 150 or more.
    expect(duringOutage, `attempts during the outage: ${duringOutage}`).toBeLessThanOrEqual(40);
    await expect.poll(() => Object.values(sup.status()).every((s) => s.state === 'ready')).toBe(true);
  });
});

describe('first connect: evidence, not guesses', () => {
  it('a black hole (accepts TCP, never answers) fails connect() at one request timeout: no initialize after a silent discover', async () => {
    await front.set('black-hole');
    cleanup.add(front, (f) => f.set('up'));
    const seen: string[] = [];
    const connecting = connect(
      { url: `${front.origin}/mcp`, requestTimeoutMs: 300, keepalive: false, restart: RESTART },
      { name: 'hole' },
    );
    const error = await connecting.catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/server\/discover' timed out after 300 ms/);
    seen.push((error as Error).message);
    expect(seen.join(), 'no initialize was tried').not.toMatch(/initialize/);
  });

  it('a wrong path (an HTML 404 page to the POST and to the SSE probe) fails for good with the URL, the paths to check and the page text', async () => {
    let requests = 0;
    const html = createServer((_req, res) => {
      requests++;
      res
        .writeHead(404, { 'content-type': 'text/html' })
        .end('<!DOCTYPE html><html><head><style>h1{color:red}</style></head><body><h1>Not Found</h1></body></html>');
    });
    await new Promise<void>((resolve) => html.listen(0, '127.0.0.1', () => resolve()));
    cleanup.add(html, (s) => new Promise((resolve) => s.close(resolve)));
    const url = `http://127.0.0.1:${(html.address() as AddressInfo).port}/wrong?key=abc`;
    const sup = cleanup.add(createSupervisor({ servers: { w: { url, keepalive: false, restart: RESTART } } }), (s) =>
      s.stop(),
    );
    const transitions: string[] = [];
    sup.on('transition', (t) => transitions.push(`${t.from}->${t.to}`));
    await sup.start();
    const handle = sup.server('w');
    const error = sup.lastFailureOf('w');
    expect(error).toBeInstanceOf(EndpointNotFoundError);
    expect(error!.message).toContain(`127.0.0.1:${(html.address() as AddressInfo).port}/wrong`);
    expect(error!.message).not.toContain('key=abc');
    expect(error!.message).toMatch(/'\/mcp'.*'\/sse'/);
    expect(error!.message).toContain('Not Found');
    expect(error!.message).not.toMatch(/<|color:red/);
    await expect.poll(() => handle.status().state).toBe('failed');
    expect(handle.status().nextAttemptAt, 'no revival: failed for good').toBeUndefined();
    expect(handle.status().lastError).toMatch(/nothing answers MCP/);
    const after = requests;
    await expect(handle.callTool('echo', {})).rejects.toThrow(/nothing answers MCP/);
    expect(requests, 'nothing more is sent to that URL').toBe(after);
    // reconnect() tries again at once.
    await handle.reconnect();
    expect(requests).toBeGreaterThan(after);
    expect(transitions).toContain('reconnecting->failed');
  });

  it("with type 'http' (no fallback) one 404 to the first initialize is enough; with type 'sse' one 404 to the stream", async () => {
    const notFound = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('no route'));
    await new Promise<void>((resolve) => notFound.listen(0, '127.0.0.1', () => resolve()));
    cleanup.add(notFound, (s) => new Promise((resolve) => s.close(resolve)));
    const origin = `http://127.0.0.1:${(notFound.address() as AddressInfo).port}`;
    for (const type of ['http', 'sse'] as const) {
      const error = await connect({ url: `${origin}/mcp`, type, keepalive: false, restart: RESTART }).catch(
        (e: Error) => e,
      );
      expect(error, type).toBeInstanceOf(EndpointNotFoundError);
      expect((error as Error).message).toContain(`${origin}/mcp`);
      expect((error as Error).message).toContain('no route');
    }
  });
});

describe("a call's own timeout is a hard bound", () => {
  it('a call after a new session lists the tools beside it, not before it: both wait together, within its timeout', async () => {
    const sup = cleanup.add(
      createSupervisor({ servers: { fx: { url: `${front.origin}/mcp`, keepalive: false, restart: RESTART } } }),
      (s) => s.stop(),
    );
    await sup.start();
    const handle = sup.server('fx');
    await handle.listTools(); // learned: a new session makes the next call list the tools again
    const ready = new Promise<void>((resolve) => handle.on('transition', (t) => t.to === 'ready' && resolve()));
    await handle.reconnect();
    await ready;
    await front.set('down');
    cleanup.add(front, (f) => f.set('up'));
    await clientNoticesClose();
    const events: CallEvent[] = [];
    sup.on('call', (event) => events.push(event));
    const askedAt = Date.now();
    const error = await handle.callTool('echo', { text: 'held' }, { timeoutMs: 1_500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    // It says why it waited.
    expect((error as Error).message).toMatch(/timed out after 1500 ms \(held: the server is \w+: .*ECONNREFUSED/);
    expect((error as RequestTimeoutError).waitedFor).toMatch(/^held: the server is /);
    await expect.poll(() => events.length).toBeGreaterThan(0);
    const call = events.find((e) => e.method === 'tools/call')!;
    // A listing first (before) made the call only once the listing had timed out, 1.5 s after it was asked for.
    expect(call.at - askedAt, 'the call was made before the listing could time out').toBeLessThan(1_500);
  });
});
