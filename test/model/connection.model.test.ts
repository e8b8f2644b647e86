import { describe, expect, it } from 'vitest';
import { CONNECTION_FACT_KINDS, connectionMachine } from '../../machines/connection.machine.js';
import { DEFAULT_RESTART_POLICY } from '../../machines/restart-policy.js';
import { ledgerOf } from './connection-requests.js';
import {
  AUTO_ERA_INPUT,
  connectionSpec,
  INPUT,
  OWN_RESTARTS_INPUT,
  session,
  unsupportedVersion,
} from './connection.spec.js';
import { flush, reportsOf, snapshotOf, type Harness } from './harness.js';
import { startModel } from './runner.js';
import { modelSuite } from './suite.js';

const spec = connectionSpec(connectionMachine);

const coverage = modelSuite('connection', spec, {
  variants: [
    { label: 'auto era', spec: connectionSpec(connectionMachine, AUTO_ERA_INPUT) },
    { label: 'own restarts', spec: connectionSpec(connectionMachine, OWN_RESTARTS_INPUT) },
  ],
});

describe('connection: fact coverage', () => {
  it('every fact kind the machine declares is emitted by some path, and it emits no other', () => {
    // After the transition coverage gate, which replays every path.
    expect([...coverage.facts].sort()).toEqual([...CONNECTION_FACT_KINDS].sort());
  });
});

async function startReady(): Promise<Harness> {
  const h = startModel(spec);
  h.controls.settle('transport', { output: { transport: 'http' } });
  await flush();
  h.controls.settle('handshake', { output: session(1) });
  await flush();
  expect(snapshotOf(h).value).toEqual({ ready: 'opening listener' });
  return h;
}

/** The keepalive actions the machine took so far (a scenario's ledger is not reset between steps). */
const keepaliveCalls = (h: Harness): string[] =>
  ledgerOf(h)
    .calls.map((call) => call.action)
    .filter((action) => action.endsWith('origin keepalive'));

describe('connection: whose keepalive', () => {
  it("over HTTP with proof 'origin', ready joins its origin's keepalive and leaves it with ready: no child of its own", async () => {
    const h = await startReady();
    expect(keepaliveCalls(h)).toEqual(['join origin keepalive']);
    expect(h.controls.isRunning('keepalive')).toBe(false);
    expect(snapshotOf(h).children['keepalive']).toBeUndefined();
    h.actor.send({ type: 'CONNECTION_LOST', error: '3 keepalive probes in a row got no answer (last: timeout)' });
    expect(snapshotOf(h).value).toMatchObject({ reconnecting: expect.anything() as unknown });
    expect(keepaliveCalls(h)).toEqual(['join origin keepalive', 'leave origin keepalive']);
    h.stop();
  });

  it("with proof 'server', and over stdio, ready has a keepalive child of its own and joins nothing", async () => {
    for (const [input, transport] of [
      [{ ...INPUT, keepalive: { ...INPUT.keepalive, proof: 'server' as const } }, 'http'],
      [INPUT, 'stdio'],
    ] as const) {
      const h = startModel({ ...spec, input });
      h.controls.settle('transport', { output: { transport } });
      await flush();
      h.controls.settle('handshake', { output: session(1) });
      await flush();
      expect(snapshotOf(h).value).toEqual({ ready: 'opening listener' });
      expect(h.controls.isRunning('keepalive'), transport).toBe(true);
      expect(keepaliveCalls(h)).toEqual([]);
      h.actor.send({ type: 'SESSION_EXPIRED', generation: 1 });
      expect(h.controls.isRunning('keepalive'), 'stopped with ready').toBe(false);
      h.stop();
    }
  });
});

describe('connection: timing scenarios', () => {
  it('reports CONNECTION_PROVEN after exactly provenAfterMs of ready, once', async () => {
    const h = await startReady();
    h.controls.emitFrom('listener', { type: 'LISTENER_SETTLED' });
    h.clock.advance(INPUT.provenAfterMs - 1);
    expect(reportsOf(h, 'CONNECTION_PROVEN')).toEqual([]);
    h.clock.advance(1);
    expect(reportsOf(h, 'CONNECTION_PROVEN').map((r) => r.at)).toEqual([INPUT.provenAfterMs]);
    h.clock.advance(10 * INPUT.provenAfterMs);
    expect(reportsOf(h, 'CONNECTION_PROVEN')).toHaveLength(1);
    h.stop();
  });

  it('does not report CONNECTION_PROVEN when ready ends before provenAfterMs; a new ready restarts the wait', async () => {
    const h = await startReady();
    h.clock.advance(INPUT.provenAfterMs - 1);
    h.actor.send({ type: 'SESSION_EXPIRED', generation: 1 });
    expect(snapshotOf(h).value).toBe('reinitializing');
    h.clock.advance(1);
    expect(reportsOf(h, 'CONNECTION_PROVEN')).toEqual([]);
    h.controls.settle('handshake', { output: session(2) });
    await flush();
    const readyAt = h.clock.now();
    h.clock.advance(INPUT.provenAfterMs);
    expect(reportsOf(h, 'CONNECTION_PROVEN').map((r) => r.at)).toEqual([readyAt + INPUT.provenAfterMs]);
    h.stop();
  });

  it('releases requests after listenerOpenTimeoutMs when the listener never settles', async () => {
    const h = await startReady();
    h.clock.advance(INPUT.listenerOpenTimeoutMs - 1);
    expect(snapshotOf(h).value).toEqual({ ready: 'opening listener' });
    h.clock.advance(1);
    expect(snapshotOf(h).value).toEqual({ ready: 'serving' });
    h.stop();
  });

  it('an unsupported protocol version reports a fatal CONNECTION_DOWN; a plain failure does not', async () => {
    const h = startModel(spec);
    h.controls.settle('transport', { output: { transport: 'http' } });
    await flush();
    h.controls.settle('handshake', { error: unsupportedVersion() });
    await flush();
    h.actor.send({ type: 'RESTART' });
    h.controls.settle('origin', { output: undefined });
    await flush();
    h.controls.settle('transport', { error: new Error('connect ECONNREFUSED') });
    await flush();
    expect(reportsOf(h, 'CONNECTION_DOWN').map((r) => r.event.fatal)).toEqual([true, false]);
    h.stop();
  });

  it('a stale SESSION_EXPIRED (older generation) leaves the session alone', async () => {
    const h = await startReady();
    h.actor.send({ type: 'SESSION_EXPIRED', generation: 0 });
    expect(snapshotOf(h).value).toEqual({ ready: 'opening listener' });
    expect(snapshotOf(h).context.session).toEqual(session(1));
    h.stop();
  });
});

describe('connection: requests around recovery', () => {
  it('a reconnect request while probing sends the doubtful requests again on the new session', async () => {
    const h = await startReady();
    h.controls.emitFrom('listener', { type: 'LISTENER_SETTLED' });
    const ledger = ledgerOf(h);
    const doubtful = ledger.sentAndReturned('doubtful');
    h.actor.send({ type: 'SESSION_IN_DOUBT', generation: 1, evidence: 'HTTP 400' });
    expect(snapshotOf(h).value).toBe('probing');
    h.actor.send({ type: 'RECONNECT' });
    expect(snapshotOf(h).value).toEqual({ connecting: 'opening transport' });
    expect(ledger.doubtful, 'no request is left in doubt with no probe to decide it').toEqual([]);
    h.controls.settle('transport', { output: { transport: 'http' } });
    await flush();
    h.controls.settle('handshake', { output: session(2) });
    await flush();
    h.controls.emitFrom('listener', { type: 'LISTENER_SETTLED' });
    expect(ledger.history.get(doubtful)).toEqual(['sent', 'doubtful', 'parked', 'sent']);
    h.stop();
  });

  it('revives a failed server after the capped backoff, and a fatal failure stays failed with its requests rejected', async () => {
    const h = startModel(spec);
    const ledger = ledgerOf(h);
    const held = ledger.issue();
    h.controls.settle('transport', { error: new Error('connect ECONNREFUSED') });
    await flush();
    h.actor.send({ type: 'GIVE_UP', reason: 'restart budget spent' });
    expect(snapshotOf(h).value).toEqual({ failed: 'waiting to revive' });
    const delays = h.facts.filter((f) => f.type === 'revival scheduled').map(({ delayMs }) => ({ delayMs }));
    expect(delays).toEqual([{ delayMs: 1_000 }]);
    h.clock.advance(999);
    expect(snapshotOf(h).value).toEqual({ failed: 'waiting to revive' });
    h.clock.advance(1);
    expect(snapshotOf(h).value, 'then the origin gives the turn').toEqual({ failed: 'reviving' });
    h.controls.settle('origin', { output: undefined });
    await flush();
    expect(snapshotOf(h).value).toEqual({ connecting: 'opening transport' });
    expect(ledger.history.get(held), 'a revival keeps the callers waiting').toEqual(['held']);
    h.controls.settle('transport', { error: new Error('connect ECONNREFUSED') });
    await flush();
    h.actor.send({ type: 'GIVE_UP', reason: 'unsupported protocol version', fatal: true });
    expect(snapshotOf(h).value).toEqual({ failed: 'for good' });
    expect(ledger.history.get(held)).toEqual(['held', 'rejected: the server has failed: connect ECONNREFUSED']);
    h.stop();
  });
});

describe('connection: its own restarts (a server root actor)', () => {
  const own = connectionSpec(connectionMachine, OWN_RESTARTS_INPUT);
  const policy = OWN_RESTARTS_INPUT.restart!;
  const refused = { error: new Error('connect ECONNREFUSED') };
  const restartsOf = (h: Harness) => snapshotOf(h).context.restarts;

  it('gives up once the window holds maxRestarts; the window passing gives the budget back, the backoff goes on growing', async () => {
    const h = startModel(own);
    h.controls.settle('transport', refused);
    await flush();
    expect(snapshotOf(h).value).toEqual({ reconnecting: 'backing off' });
    h.clock.advance(policy.backoff.initialMs - 1);
    expect(snapshotOf(h).value, 'not a millisecond before the backoff').toEqual({ reconnecting: 'backing off' });
    h.clock.advance(1);
    expect(snapshotOf(h).value).toEqual({ reconnecting: 'waiting for origin' });
    h.controls.settle('origin', { output: undefined });
    await flush();
    h.controls.settle('transport', refused);
    await flush();
    expect(snapshotOf(h).value, 'the budget is spent: failed, to be revived').toEqual({ failed: 'waiting to revive' });
    expect(h.facts.filter((f) => f.type === 'gave up')).toEqual([
      {
        type: 'gave up',
        reason: 'connect ECONNREFUSED (restart budget spent: 1 restarts within 600000 ms)',
        fatal: false,
      },
    ]);
    expect(reportsOf(h, 'CONNECTION_DOWN'), 'a parent still hears of each down').toHaveLength(2);
    // The first restart (counted when its attempt was made, after its backoff) leaves the window withinMs after it.
    h.clock.set(policy.backoff.initialMs + policy.withinMs - 1);
    expect(restartsOf(h).inWindow).toBe(1);
    h.clock.set(policy.backoff.initialMs + policy.withinMs);
    expect(restartsOf(h)).toMatchObject({ inWindow: 0, attempt: 1, total: 1 });
    // The revival's attempt fails: a restart again, after the next backoff step.
    h.controls.settle('origin', { output: undefined });
    await flush();
    h.controls.settle('transport', refused);
    await flush();
    expect(snapshotOf(h).value).toEqual({ reconnecting: 'backing off' });
    const downAt = h.clock.now();
    h.clock.advance(policy.backoff.initialMs * policy.backoff.factor - 1);
    expect(snapshotOf(h).value).toEqual({ reconnecting: 'backing off' });
    h.clock.advance(1);
    expect(snapshotOf(h).value).toEqual({ reconnecting: 'waiting for origin' });
    expect(h.clock.now() - downAt).toBe(10_000);
    expect(restartsOf(h).total).toBe(2);
    h.stop();
  });

  it('a proven session resets the budget and the backoff; the window expiry of before is ignored', async () => {
    const h = startModel(own);
    h.controls.settle('transport', refused);
    await flush();
    h.clock.advance(policy.backoff.initialMs);
    h.controls.settle('origin', { output: undefined });
    await flush();
    h.controls.settle('transport', { output: { transport: 'http' } });
    await flush();
    h.controls.settle('handshake', { output: session(1) });
    await flush();
    h.controls.emitFrom('listener', { type: 'LISTENER_SETTLED' });
    h.clock.advance(policy.provenAfterMs);
    expect(restartsOf(h)).toMatchObject({ inWindow: 0, attempt: 0, total: 1, epoch: 1 });
    h.actor.send({ type: 'CONNECTION_LOST', error: 'socket hang up' });
    expect(snapshotOf(h).value, 'a fresh budget: a restart, not giving up').toEqual({ reconnecting: 'backing off' });
    // Counted in the total now, in the budget when its attempt is made.
    expect(restartsOf(h)).toMatchObject({ inWindow: 0, attempt: 0, total: 2 });
    const restartAt = h.clock.now() + policy.backoff.initialMs;
    h.clock.set(policy.backoff.initialMs + policy.withinMs);
    expect(restartsOf(h).inWindow, 'the first window ended before the reset: its expiry counts nothing').toBe(1);
    expect(h.clock.now()).toBeGreaterThan(restartAt);
    h.stop();
  });

  it('callers waiting for a server that stays down: attempts at the 1 s cap, the budget spent no faster than the long backoff would', async () => {
    // The default policy (20 restarts in 10 minutes, 0.5 s doubling to 30 s), without jitter.
    const defaults = { ...DEFAULT_RESTART_POLICY, backoff: { ...DEFAULT_RESTART_POLICY.backoff, jitter: 0 } };
    const h = startModel(connectionSpec(connectionMachine, { ...OWN_RESTARTS_INPUT, restart: defaults }));
    h.controls.settle('transport', refused);
    await flush();
    let attempts = 0;
    let longestWait = 0;
    let waitingSince = h.clock.now();
    while (snapshotOf(h).matches('reconnecting')) {
      h.actor.send({ type: 'REQUESTS_WAITING' }); // callers are waiting all along
      while (!snapshotOf(h).matches({ reconnecting: 'waiting for origin' })) h.clock.advance(100);
      longestWait = Math.max(longestWait, h.clock.now() - waitingSince);
      h.controls.settle('origin', { output: undefined });
      await flush();
      attempts++;
      h.controls.settle('transport', refused);
      await flush();
      waitingSince = h.clock.now();
    }
    expect(snapshotOf(h).value).toEqual({ failed: 'waiting to revive' });
    expect(longestWait, 'every attempt within the waiting cap').toBeLessThanOrEqual(1_000);
    // The long backoff's 20 attempts: 0.5 + 1 + 2 + 4 + 8 + 16 + 14 × 30 s.
    const longBackoff = Array.from({ length: 20 }, (_, n) => Math.min(30_000, 500 * 2 ** n)).reduce((a, b) => a + b);
    expect(h.clock.now(), 'failed no sooner than the long backoff spends the budget').toBeGreaterThanOrEqual(
      longBackoff,
    );
    expect(attempts, 'many more attempts than the budget, each costing its share').toBeGreaterThan(400);
    // Failed, callers still waiting: the first revival comes at once, later ones keep the revival
    // backoff (1, 2, 4 … 30 s), so the server reads `failed` between them instead of flapping each second.
    const failedAt = h.clock.now();
    let revivals = 0;
    while (h.clock.now() - failedAt < 60_000) {
      if (snapshotOf(h).matches({ failed: 'waiting to revive' })) h.actor.send({ type: 'REQUESTS_WAITING' });
      h.clock.advance(100);
      if (!snapshotOf(h).matches({ failed: 'reviving' })) continue;
      revivals++;
      h.controls.settle('origin', { output: undefined });
      await flush();
      h.controls.settle('transport', refused);
      await flush();
      expect(snapshotOf(h).matches('failed'), 'a failed revival is failed again').toBe(true);
    }
    expect(revivals, 'revivals in a minute: at 1 s (brought forward), then 2, 4, 8 and 16 s apart').toBe(5);
    h.stop();
  });

  it('a fatal failure gives up at once, whatever the budget', async () => {
    const h = startModel(own);
    h.controls.settle('transport', { output: { transport: 'http' } });
    await flush();
    h.controls.settle('handshake', { error: unsupportedVersion() });
    await flush();
    expect(snapshotOf(h).value).toEqual({ failed: 'for good' });
    expect(restartsOf(h).total).toBe(0);
    expect(h.facts.filter((f) => f.type === 'gave up').map((f) => f.fatal)).toEqual([true]);
    h.stop();
  });
});
