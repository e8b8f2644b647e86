/** The connection machine's model: events the real system can produce in each state, side effects. */
import { expect } from 'vitest';
import {
  AuthorizationError,
  AuthorizationRequiredError,
  UnsupportedProtocolVersionError,
} from '../../src/core/errors.js';
import type { AnyEventObject, AnyMachineSnapshot, AnyStateMachine } from 'xstate';
import { connectionMachine, type ConnectionInput, type SessionInfo } from '../../machines/connection.machine.js';
import {
  baseDelay,
  chargeHurriedAttempt,
  giveUpReason,
  restartDelay,
  type RestartPolicy,
  type RestartRecord,
} from '../../machines/restart-policy.js';
import { checkRequests, driveRequests, requestActions } from './connection-requests.js';
import { flush, reportsOf, snapshotOf, type Harness } from './harness.js';
import type { ModelSpec, StepContext } from './runner.js';

export const INPUT: ConnectionInput = {
  server: 'docs',
  transport: 'auto',
  listenerOpenTimeoutMs: 100,
  provenAfterMs: 1_000,
  keepalive: { intervalMs: 5_000, timeoutMs: 1_000, maxMissed: 2 },
  era: 'legacy',
};
/** The default: a `server/discover` probe decides the era (the `auto era` variant of the model). */
export const AUTO_ERA_INPUT: ConnectionInput = { ...INPUT, era: 'auto' };
/**
 * A server's root actor: the connection decides its restarts itself (the `own restarts` variant).
 * One restart in the window; a backoff longer than the waiting cap, so a waiting request always
 * hurries it; a window longer than any path.
 */
export const OWN_RESTARTS_INPUT: ConnectionInput = {
  ...INPUT,
  // Streamable HTTP only: the fallback's paths are the parent-decided model's, and the budget is the point here.
  transport: 'http',
  restart: {
    maxRestarts: 1,
    withinMs: 600_000,
    provenAfterMs: INPUT.provenAfterMs,
    backoff: { initialMs: 5_000, maxMs: 20_000, factor: 2, jitter: 0 },
  },
  random: () => 0.5,
};
const OPEN_TIMEOUT = 'xstate.after.listener open timeout.connection.ready.opening listener';
const PROVEN = 'xstate.after.session proven delay.connection.ready';
const REVIVE = 'xstate.after.revive delay.connection.failed.waiting to revive';
const HURRIED = 'xstate.after.waiting reconnect delay.connection.reconnecting.hurrying';
const HURRIED_REVIVE = 'xstate.after.waiting reconnect delay.connection.failed.hurrying to revive';

export function session(sessionGeneration: number): SessionInfo {
  return {
    era: 'legacy',
    protocolVersion: '2025-06-18',
    serverInfo: { name: 'fixture', version: '1.0.0' },
    capabilities: {},
    sessionGeneration,
  };
}

/** What a modern server's `server/discover` gave: the discovery is the session. */
export function discovery(sessionGeneration: number): SessionInfo {
  return { ...session(sessionGeneration), era: 'modern', protocolVersion: '2026-07-28' };
}

/** The runtime's own error: marked fatal, so the connection reports a fatal CONNECTION_DOWN. */
export function unsupportedVersion(): Error {
  return new UnsupportedProtocolVersionError('1999-01-01', ['2025-11-25']);
}

/** What the HTTP transport throws when the Streamable HTTP initialize POST is refused. */
export function refused(status: number): Error {
  return Object.assign(new Error(`HTTP ${status} for 'initialize'`), { status });
}

/** What the transports throw on 401: fixable with an auth provider, fatal without one. */
export function unauthorized(fatal = false): Error {
  const hint = fatal ? '; configure `auth`' : '';
  return new AuthorizationRequiredError(
    `HTTP 401 for 'initialize': authorization required${hint}`,
    { status: 401, wwwAuthenticate: 'Bearer', resourceUrl: new URL('http://127.0.0.1/mcp') },
    0,
    { fatal },
  );
}

/** What a handshake step throws when the server answered 429/503 for all its bound (handshake-busy.ts). */
export function busy(): Error {
  return Object.assign(new Error('the server is busy (HTTP 503, no Retry-After)'), { status: 503, waitMs: 7_000 });
}

const done = (id: string, output?: unknown): AnyEventObject => ({ type: `xstate.done.actor.${id}`, output });
const failure = (id: string, error: unknown): AnyEventObject => ({ type: `xstate.error.actor.${id}`, error });

function events(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  if (snapshot.status !== 'active') return [];
  const children = Object.keys(snapshot.children);
  const list: AnyEventObject[] = [{ type: 'CLOSE' }];
  const latched = snapshot.context.latchedTransport as string | undefined;
  if (children.includes('transport')) {
    list.push(
      done('transport', { transport: latched ?? 'http' }),
      failure('transport', new Error('connect ECONNREFUSED')),
    );
    // A restarted process: the store says the server speaks the 2025 era.
    if (snapshot.context.preferredEra === 'auto')
      list.push(done('transport', { transport: latched ?? 'http', storedEra: 'legacy' }));
    // A legacy SSE stream refused with 401 as it opens.
    list.push(failure('transport', unauthorized()));
  }
  if (children.includes('handshake')) {
    // A re-handshake yields a new session generation.
    list.push(done('handshake', session(snapshot.matches('reinitializing') ? 2 : 1)));
    list.push(failure('handshake', new Error('initialize timed out')), failure('handshake', unsupportedVersion()));
    list.push(failure('handshake', busy()));
    // 405 sends an unlatched `auto` server to the fallback; 401 never does.
    list.push(failure('handshake', refused(405)), failure('handshake', refused(401)));
    // 401 with an auth provider authorizes; without one it is fatal.
    list.push(failure('handshake', unauthorized()), failure('handshake', unauthorized(true)));
    // The transport itself can die during the handshake.
    list.push(
      { type: 'CONNECTION_LOST', error: 'the SSE stream closed' },
      { type: 'CONNECTION_LOST', error: 'exited with code 1 before its first handshake', fatal: true },
    );
  }
  if (children.includes('discover')) {
    const generation = snapshot.matches('discovering') && snapshot.context.latchedEra ? 2 : 1;
    list.push(
      done('discover', { era: 'modern', session: discovery(generation) }),
      done('discover', { era: 'legacy', evidence: "HTTP 400 for 'server/discover'" }),
      failure('discover', new Error('connect ECONNREFUSED')),
      failure('discover', busy()),
      failure('discover', unauthorized()),
      { type: 'CONNECTION_LOST', error: 'exited with code 1' },
    );
  }
  if (children.includes('sse-fallback')) {
    list.push(
      done('sse-fallback', { found: true }),
      done('sse-fallback', { found: false, error: 'Streamable HTTP was refused and the legacy SSE probe failed too' }),
      // 404 to both first handshakes: a wrong URL, fatal (the supervisor gives up at once).
      done('sse-fallback', { found: false, error: 'nothing answers MCP at http://127.0.0.1/wrong', fatal: true }),
    );
  }
  if (children.includes('authorize')) {
    list.push(
      done('authorize'),
      failure('authorize', new AuthorizationError('the token endpoint answered invalid_grant')),
      failure('authorize', new AuthorizationError('the AS is down', { fatal: false })),
    );
    list.push({ type: 'CONNECTION_LOST', error: 'the SSE stream closed' });
  }
  if (children.includes('close')) list.push(done('close'), failure('close', new Error('DELETE failed')));
  // `handle.reconnect()`, whatever the state.
  list.push({ type: 'RECONNECT' });
  if (snapshot.matches('ready')) {
    const generation = (snapshot.context.session as SessionInfo).sessionGeneration;
    list.push({ type: 'SESSION_EXPIRED', generation }, { type: 'SESSION_EXPIRED', generation: generation - 1 });
    list.push(
      { type: 'SESSION_IN_DOUBT', generation, evidence: 'HTTP 400' },
      { type: 'SESSION_IN_DOUBT', generation: generation - 1, evidence: 'HTTP 400' },
    );
    list.push({ type: 'SERVER_UNREACHABLE', error: 'server unreachable (ECONNREFUSED)' });
    list.push({ type: 'LISTENER_REFUSED_SESSION', status: 404 });
    list.push(
      { type: 'CONNECTION_LOST', error: 'socket hang up' },
      { type: 'LISTENER_LOST', error: 'listening stream lost' },
    );
    list.push({ type: 'AUTHORIZATION_REQUIRED', error: "HTTP 401 for 'tools/call': authorization required" });
    // listenerOpenTimeoutMs < provenAfterMs: the proven timer can only fire once serving.
    if (snapshot.matches({ ready: 'opening listener' }))
      list.push({ type: 'LISTENER_SETTLED' }, { type: OPEN_TIMEOUT });
    else {
      list.push({ type: PROVEN });
      // The runtime: what to listen for changed; the listener: nothing to listen to (it settled first).
      list.push({ type: 'LISTEN_WANTED' });
      if (children.includes('listener')) list.push({ type: 'NOTHING_TO_LISTEN' });
      // An events subscription spawned, and one that ended (closed or terminated) forgotten:
      // the children are not projected, so both are driven (`driveSubscriptions`).
      list.push({ type: 'SUBSCRIBE' }, { type: SUBSCRIPTION_DONE });
    }
  }
  if (children.includes('probe')) {
    const generation = (snapshot.context.session as SessionInfo).sessionGeneration;
    list.push(
      done('probe', { verdict: 'alive' }),
      done('probe', { verdict: 'session lost', evidence: 'HTTP 400 to a ping' }),
      done('probe', { verdict: 'unreachable', error: 'the probe got no answer in time' }),
      done('probe', { verdict: 'unauthorized', error: "HTTP 401 for 'ping'" }),
      failure('probe', new Error('no transport')),
    );
    // What requests still on the wire can report while the probe runs.
    list.push({ type: 'SESSION_EXPIRED', generation }, { type: 'SESSION_EXPIRED', generation: generation - 1 });
    list.push(
      { type: 'SERVER_UNREACHABLE', error: 'server unreachable (ECONNREFUSED)' },
      { type: 'CONNECTION_LOST', error: 'socket hang up' },
    );
  }
  if (snapshot.matches({ failed: 'waiting to revive' })) list.push({ type: REVIVE }, { type: 'REQUESTS_WAITING' });
  if (snapshot.matches({ failed: 'hurrying to revive' })) list.push({ type: HURRIED_REVIVE });
  // The origin's turn came (or the origin is up); the promise never rejects in the runtime, the model covers it.
  if (children.includes('origin')) list.push(done('origin'), failure('origin', new Error('stopped')));
  if (snapshot.matches({ reconnecting: 'backing off' })) list.push({ type: 'REQUESTS_WAITING' });
  if (snapshot.matches({ reconnecting: 'hurrying' })) list.push({ type: HURRIED });
  // The verdict: the parent's, or (own restarts) RESTART after the connection's own backoff (the clock delivers it).
  // Own restarts: the backoff is longer than the cap, so only `backing off` sees its RESTART.
  const ownRestart = snapshot.context.restart === undefined || snapshot.matches({ reconnecting: 'backing off' });
  if (snapshot.matches('reconnecting') && ownRestart) list.push({ type: 'RESTART' });
  if (snapshot.matches('reconnecting'))
    list.push(
      { type: 'GIVE_UP', reason: 'restart budget spent' },
      { type: 'GIVE_UP', reason: 'unsupported protocol version', fatal: true },
    );
  // A restart left the window (sent at once: the window outlasts every path; its timing is a scenario test).
  const restarts = snapshot.context.restarts as RestartRecord;
  if (restarts.inWindow > 0) list.push({ type: 'RESTART_WINDOW_PASSED', epoch: restarts.epoch });
  return list;
}

function project(snapshot: AnyMachineSnapshot) {
  const session = snapshot.context.session as SessionInfo | undefined;
  const restarts = snapshot.context.restarts as RestartRecord;
  return {
    value: snapshot.value,
    generation: session?.sessionGeneration ?? null,
    fatal: snapshot.context.fatal,
    latched: snapshot.context.latchedTransport ?? null,
    era: snapshot.context.latchedEra ?? null,
    // Own restarts: the budget left decides between a restart and giving up.
    ...(snapshot.context.restart && { restarts: restarts.inWindow }),
    busy: (snapshot.context.restarts as RestartRecord).busyMs !== undefined,
    listening: snapshot.context.listening,
  };
}

function isFatalEvent(event: AnyEventObject): boolean {
  if (event.type === 'CONNECTION_LOST') return event.fatal === true;
  if (event.type === 'xstate.done.actor.sse-fallback') return (event.output as { fatal?: boolean }).fatal === true;
  return (event.error as { fatal?: unknown } | undefined)?.fatal === true;
}

function errorOf(event: AnyEventObject): string {
  if (typeof event.error === 'string') return event.error;
  if (event.type === 'xstate.done.actor.probe') {
    const verdict = event.output as { error?: string; evidence?: string };
    return verdict.error ?? verdict.evidence ?? 'connection lost';
  }
  if (event.type === 'xstate.done.actor.sse-fallback') return (event.output as { error: string }).error;
  return event.error instanceof Error ? event.error.message : String(event.error);
}

/** A listener child runs only in `ready`, and `listening` says whether one does. */
function checkListener({ h, event, before, after }: StepContext): void {
  const listener = after.children.listener;
  expect(after.context.listening, '`listening` says whether a listener child runs').toBe(listener !== undefined);
  if (!after.matches('ready')) expect(listener, 'no listener outside ready').toBeUndefined();
  if (after.matches('ready') && !before.matches('ready'))
    expect(listener, 'entering ready starts a listener').toBeDefined();
  if (event.type === 'NOTHING_TO_LISTEN') expect(listener, 'nothing to listen to: the listener stops').toBeUndefined();
  if (event.type === 'LISTEN_WANTED') {
    expect(listener, 'something to listen to: a listener runs').toBeDefined();
    const told = h.controls.received('listener').filter((e) => e.type === 'SUBSCRIPTIONS_CHANGED').length;
    h.scratch.subscriptionChanges ??= 0;
    expect(told - h.scratch.subscriptionChanges, 'a running listener is told; a new one is not').toBe(
      before.context.listening ? 1 : 0,
    );
  }
  h.scratch.subscriptionChanges = h.controls
    .received('listener')
    .filter((e) => e.type === 'SUBSCRIPTIONS_CHANGED').length;
}

function checkSideEffects(step: StepContext): void {
  checkListener(step);
  const { h, event, before, after, reportsFrom } = step;
  const policy = before.context.restart as RestartPolicy | undefined;
  const wasDown = before.matches('reconnecting') || before.matches('failed');
  // Own restarts with the budget spent: down and given up in one step.
  const enteredReconnecting =
    !wasDown && (after.matches('reconnecting') || (policy !== undefined && after.matches('failed')));
  if (policy) checkOwnRestarts({ h, event, before, after, reportsFrom }, policy, enteredReconnecting);
  const down = reportsOf(h, 'CONNECTION_DOWN', reportsFrom).map((r) => r.event);
  expect(down, 'CONNECTION_DOWN is reported exactly on entering reconnecting').toEqual(
    enteredReconnecting
      ? [{ type: 'CONNECTION_DOWN', server: INPUT.server, error: errorOf(event), fatal: isFatalEvent(event) }]
      : [],
  );
  if (!before.matches('ready') && after.matches('ready')) {
    h.scratch.readyAt = h.clock.now();
    expect(after.context.lastError, 'ready clears the last failure (authorized, probed alive too)').toBeUndefined();
  }
  // Someone waits: the backoff is capped at waitingReconnectMs (default 1 s), then the origin's turn.
  if (after.matches({ reconnecting: 'hurrying' }) || after.matches({ failed: 'hurrying to revive' }))
    h.scratch.hurriedAt = h.clock.now();
  if (event.type === HURRIED || event.type === HURRIED_REVIVE) {
    expect(h.clock.now() - h.scratch.hurriedAt, 'a waiting request caps the backoff at 1 s').toBe(1_000);
    expect(after.children.origin, 'then the origin decides when to attempt').toBeDefined();
  }
  if (event.type === 'RESTART' && before.matches('reconnecting'))
    expect(after.value, 'a restart waits for the origin first').toEqual({ reconnecting: 'waiting for origin' });
  if (event.type === 'xstate.done.actor.origin')
    expect(after.value, "the origin's turn: a new connection").toEqual({ connecting: 'opening transport' });
  const proven = reportsOf(h, 'CONNECTION_PROVEN', reportsFrom);
  expect(
    proven.map((r) => r.event),
    'CONNECTION_PROVEN only when the proven delay fires',
  ).toEqual(event.type === PROVEN ? [{ type: 'CONNECTION_PROVEN', server: INPUT.server }] : []);
  for (const report of proven)
    expect(report.at - h.scratch.readyAt, 'proven after exactly provenAfterMs of ready').toBe(INPUT.provenAfterMs);
  if (event.type === 'xstate.done.actor.handshake') {
    expect(after.context.session).toEqual(event.output);
    expect(after.context.lastError).toBeUndefined();
  }
  if (event.type === 'xstate.done.actor.transport')
    expect(after.context.transport).toBe(before.context.latchedTransport ?? 'http');
  if (event.type === 'xstate.error.actor.handshake' && before.matches('initializing')) {
    const status = (event.error as { status?: number }).status;
    const fallsBack =
      status === 405 && before.context.configuredTransport === 'auto' && before.context.latchedTransport === undefined;
    expect(
      after.matches({ connecting: 'falling back' }),
      'only an unlatched auto server refused with 400/404/405 falls back',
    ).toBe(fallsBack);
  }
  if (event.type === 'xstate.done.actor.sse-fallback' && (event.output as { found: boolean }).found) {
    expect(after.context.latchedTransport, 'a found legacy endpoint latches sse').toBe('sse');
    expect(after.value).toEqual({ connecting: 'opening transport' });
  }
  if (event.type === 'xstate.done.actor.handshake')
    expect(after.context.latchedTransport).toBe(before.context.latchedTransport ?? before.context.transport);
  if (event.type === 'GIVE_UP' && after.matches('failed') && !before.matches('failed'))
    expect(after.context.lastError).toBe(before.context.lastError ?? event.reason);
  // A lost session is re-initialized; a modern server (no session) is discovered again.
  const again = before.context.latchedEra === 'modern' ? 'discovering' : 'reinitializing';
  if (event.type === 'SESSION_EXPIRED') {
    const current = event.generation === (before.context.session as SessionInfo).sessionGeneration;
    if (current) expect(after.value, 'a 404 for the current session re-initializes (modern: rediscovers)').toBe(again);
    else expect(after.value, 'a 404 for an older session changes nothing').toEqual(before.value);
  }
  if (after.matches('reinitializing') && before.matches('ready')) expect(after.context.session).toBeUndefined();
  if (event.type === 'SESSION_IN_DOUBT') {
    const current = event.generation === (before.context.session as SessionInfo).sessionGeneration;
    expect(after.value, 'a doubtful 400 on the current session is checked by one probe').toEqual(
      current ? 'probing' : before.value,
    );
    if (current) expect(h.controls.started.at(-1)).toEqual({ key: 'probe', input: { server: INPUT.server } });
  }
  if (event.type === 'LISTENER_REFUSED_SESSION')
    expect(after.value, 'a refused listening stream means the session is gone').toBe(again);
  if (event.type === 'SERVER_UNREACHABLE') {
    expect(enteredReconnecting, 'an unreachable server is a connection event').toBe(true);
    expect(after.context.lastError).toBe(event.error);
  }
  if (event.type === 'xstate.done.actor.probe') {
    const { verdict } = event.output as { verdict: string };
    const target = { alive: { ready: 'opening listener' }, 'session lost': again }[verdict];
    const down = enteredReconnecting ? after.value : { reconnecting: 'backing off' };
    const expected = target ?? (verdict === 'unauthorized' ? 'authorizing' : down);
    expect(after.value, `probe verdict '${verdict}'`).toEqual(expected);
    if (verdict === 'alive') expect(after.context.session, 'the session lives on').toEqual(before.context.session);
  }
  if (event.type === 'RECONNECT' && before.status === 'active' && !before.matches('closing')) {
    expect(after.value, 'a reconnect request starts over, whatever the state').toEqual({
      connecting: 'opening transport',
    });
    expect(after.context.session).toBeUndefined();
  }
  if (event.type === 'xstate.done.actor.discover') {
    const modern = (event.output as { era: string }).era === 'modern';
    expect(after.value, 'a modern answer is ready at once; anything else goes on to initialize').toEqual(
      modern ? { ready: 'opening listener' } : 'initializing',
    );
    if (modern) expect(after.context.latchedEra, 'a modern discovery latches the era').toBe('modern');
  }
  if (event.type === 'xstate.done.actor.transport') {
    const output = event.output as { transport: string; storedEra?: string };
    const stored = before.context.latchedEra === undefined && output.storedEra === 'legacy';
    const legacy = before.context.preferredEra === 'legacy' || before.context.latchedEra === 'legacy' || stored;
    const sse = output.transport === 'sse';
    expect(after.value, 'a probe unless the era is pinned, latched or stored legacy (or legacy SSE)').toBe(
      legacy || sse ? 'initializing' : 'discovering',
    );
  }
  const refusal =
    event.type.startsWith('xstate.error.actor.') &&
    (event.error as { code?: string }).code === 'AUTHORIZATION_REQUIRED';
  if (refusal || event.type === 'AUTHORIZATION_REQUIRED') {
    const fixable = event.type === 'AUTHORIZATION_REQUIRED' || !(event.error as { fatal: boolean }).fatal;
    expect(after.matches('authorizing'), 'a 401 authorizes only when a provider can fix it').toBe(fixable);
    if (event.type === 'AUTHORIZATION_REQUIRED')
      expect(after.context.session, 'authorizing keeps a live session').toEqual(before.context.session);
  }
  if (event.type === 'xstate.done.actor.authorize') {
    expect(after.value, 'after authorizing: back to ready with a live session, else a new handshake').toEqual(
      before.context.session ? { ready: 'opening listener' } : { connecting: 'opening transport' },
    );
  }
}

/** The connection that decides its restarts: the backoff, the budget, the reason it gives up with. */
function checkOwnRestarts({ h, event, before, after }: StepContext, policy: RestartPolicy, wentDown: boolean): void {
  const was = before.context.restarts as RestartRecord;
  const now = after.context.restarts as RestartRecord;
  const busyMs = now.busyMs;
  if (wentDown && busyMs !== undefined) {
    expect(after.matches('reconnecting'), 'a busy server is waited for, whatever the budget').toBe(true);
    expect(now, 'an attempt after a busy answer is no failure the budget counts').toMatchObject({
      inWindow: was.inWindow,
      attempt: was.attempt + 1,
      total: was.total + 1,
    });
    h.scratch.downAt = h.clock.now();
  } else if (wentDown) {
    const budget = !after.context.fatal && was.inWindow < policy.maxRestarts;
    expect(after.matches('reconnecting'), 'a restart while the budget lasts, else giving up at once').toBe(budget);
    expect(now.total, 'each restart counted').toBe(was.total + (budget ? 1 : 0));
    if (budget) h.scratch.downAt = h.clock.now();
    else {
      const gaveUp = h.facts.filter((f) => f.type === 'gave up').at(-1);
      const error = (after.context.lastError as string | undefined) ?? 'connection lost';
      expect(gaveUp, 'the reason it gives up with').toEqual({
        type: 'gave up',
        reason: giveUpReason(error, after.context.fatal as boolean, policy),
        fatal: after.context.fatal,
      });
    }
  }
  if (event.type === 'REQUESTS_WAITING' && was.busyMs !== undefined && before.matches('reconnecting'))
    expect(after.value, "a busy server's wait is not cut short by waiting requests").toEqual(before.value);
  // The budget is counted when an attempt is made: whole after the backoff, a share when hurried.
  if (event.type === 'RESTART' && before.matches('reconnecting') && was.busyMs === undefined)
    expect(now, 'an attempt after its backoff is one restart').toMatchObject({
      inWindow: was.inWindow + 1,
      attempt: was.attempt + 1,
    });
  if (event.type === HURRIED) {
    const { record } = chargeHurriedAttempt(was, 1_000, baseDelay(was.attempt, policy.backoff));
    expect(now, 'an attempt made early costs its share of the backoff').toMatchObject(record);
    expect(now.inWindow - was.inWindow, 'never more than one restart').toBeLessThanOrEqual(1);
  }
  if (event.type === 'RESTART' && before.matches({ reconnecting: 'backing off' })) {
    const backoff = restartDelay(was.attempt - (was.busyMs === undefined ? 0 : 1), policy.backoff, () => 0.5);
    const delay = Math.max(backoff, was.busyMs ?? 0);
    expect(h.clock.now() - h.scratch.downAt, 'the restart comes after exactly its backoff').toBe(delay);
  }
  if (event.type === PROVEN)
    expect(now, 'a proven session resets the budget').toMatchObject({ inWindow: 0, attempt: 0 });
  if (event.type === 'RESTART_WINDOW_PASSED')
    expect(now.inWindow, 'one restart left the window').toBe(was.inWindow - 1);
}

const SUBSCRIPTION_DONE = 'xstate.done.actor.subscription.*';

/** SUBSCRIBE spawns `subscription.<n>`; its end (a stand-in that resolves) stops and forgets it. */
async function driveSubscriptions(event: AnyEventObject, h: Harness): Promise<boolean> {
  const subscribe = () => {
    const id = `subscription.${(h.scratch.subscriptions = (h.scratch.subscriptions ?? 0) + 1)}`;
    h.actor.send({ type: 'SUBSCRIBE', id, input: { key: id } });
    expect(snapshotOf(h).children[id], 'SUBSCRIBE spawns the subscription as a child').toBeDefined();
    return id;
  };
  if (event.type === 'SUBSCRIBE') {
    subscribe();
    return true;
  }
  if (event.type !== SUBSCRIPTION_DONE) return false;
  const id = subscribe();
  await flush();
  h.controls.settle(id, { output: undefined });
  await flush();
  expect(snapshotOf(h).children[id], 'an ended subscription is forgotten').toBeUndefined();
  return true;
}

export const connectionSpec = (machine: AnyStateMachine = connectionMachine, input = INPUT): ModelSpec => ({
  machine,
  input,
  implementations: (h: Harness) => ({
    actors: {
      'connect transport': h.controls.promise(),
      'discover server': h.controls.promise(),
      'initialize session': h.controls.promise(),
      'close session': h.controls.promise(),
      authorize: h.controls.promise(),
      'sse-fallback': h.controls.promise(),
      'probe session': h.controls.promise(),
      listener: h.controls.callback(),
      keepalive: h.controls.callback(),
      'wait for origin': h.controls.promise(),
      subscription: h.controls.promise(),
    },
    actions: requestActions(h),
  }),
  events,
  project,
  viaChild: {
    LISTENER_SETTLED: 'listener',
    LISTENER_LOST: 'listener',
    LISTENER_REFUSED_SESSION: 'listener',
    NOTHING_TO_LISTEN: 'listener',
    CONNECTION_LOST: 'keepalive',
  },
  drive: async (event, h) => {
    driveRequests(event, h, snapshotOf(h));
    if (await driveSubscriptions(event, h)) return true;
    // Sent at once, not by the clock (the window outlasts every path), for the current window
    // (the model does not tell epochs apart: each proven session bumps it).
    if (event.type !== 'RESTART_WINDOW_PASSED') return false;
    h.actor.send({ ...event, epoch: (snapshotOf(h).context.restarts as RestartRecord).epoch });
    return true;
  },
  afterStep: (step) => {
    checkSideEffects(step);
    checkRequests(step);
  },
});
