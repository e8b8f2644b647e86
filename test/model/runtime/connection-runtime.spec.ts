/**
 * The connection model as the real runtime can walk it: the pure machine's graph with the events
 * a runtime over a scripted transport can produce in each state (run.ts produces them), and the
 * replay of a path on a real supervisor, step by step.
 */
import { expect } from 'vitest';
import type { AnyEventObject, AnyMachineSnapshot } from 'xstate';
import { AuthorizationError } from '../../../src/core/errors.js';
import { connectionMachine } from '../../../machines/connection.machine.js';
import { AUTO_ERA_INPUT, connectionSpec, refused, session, unauthorized } from '../connection.spec.js';
import type { Coverage } from '../coverage.js';
import { describeEvent, transitionPaths, type ModelPath, type ModelSpec } from '../runner.js';
import { discoverEvents, isModernSession, passesByItself } from './modern-era.js';
import { flush, RuntimeRun } from './run.js';

const OPEN_TIMEOUT = 'xstate.after.listener open timeout.connection.ready.opening listener';
const PROVEN = 'xstate.after.session proven delay.connection.ready';
const REVIVE = 'xstate.after.revive delay.connection.failed.waiting to revive';

const done = (id: string, output?: unknown): AnyEventObject => ({ type: `xstate.done.actor.${id}`, output });
const failure = (id: string, error: unknown): AnyEventObject => ({ type: `xstate.error.actor.${id}`, error });

/**
 * What the runtime can produce in each state. Not here: fatal failures (the real supervisor gives
 * up on them at once, so `reconnecting` would not wait for the model's RESTART or GIVE_UP; the
 * pure model covers them), a probe that throws (probeSession turns every failure into a verdict),
 * and CLOSE or RECONNECT while no transport is open (the runtime's close would wait for an open
 * the script never finishes). No transition is lost: CLOSE and RECONNECT are root transitions.
 */
function events(snapshot: AnyMachineSnapshot): AnyEventObject[] {
  if (snapshot.status !== 'active') return [];
  // The modern era's `opening listener` and `closing` pass by themselves (modern-era.ts).
  const passing = passesByItself(snapshot);
  if (passing) return [passing];
  const children = Object.keys(snapshot.children);
  const list: AnyEventObject[] = [];
  const generation = (snapshot.context.session as { sessionGeneration: number } | undefined)?.sessionGeneration ?? 0;
  const modern = isModernSession(snapshot);
  if (children.includes('transport')) {
    const latched = snapshot.context.latchedTransport as string | undefined;
    list.push(done('transport', { transport: latched ?? 'http' }), failure('transport', new Error('ECONNREFUSED')));
    list.push(failure('transport', unauthorized()));
  }
  if (children.includes('discover')) list.push(...discoverEvents(snapshot));
  if (children.includes('handshake')) {
    list.push(done('handshake', session(snapshot.matches('reinitializing') ? 2 : 1)));
    list.push(failure('handshake', new Error('initialize timed out')), failure('handshake', refused(405)));
    list.push(failure('handshake', unauthorized()));
    list.push({ type: 'CONNECTION_LOST', error: 'the SSE stream closed' }, { type: 'CLOSE' });
  }
  if (children.includes('sse-fallback'))
    list.push(done('sse-fallback', { found: true }), done('sse-fallback', { found: false, error: 'refused' }));
  if (children.includes('authorize')) {
    list.push(done('authorize'), failure('authorize', new AuthorizationError('the AS is down', { fatal: false })));
    list.push({ type: 'CONNECTION_LOST', error: 'the SSE stream closed' });
  }
  if (children.includes('close')) list.push(done('close'), failure('close', new Error('DELETE failed')));
  if (snapshot.matches('closing')) list.push({ type: 'CLOSE' }, { type: 'RECONNECT' });
  if (snapshot.matches('ready')) {
    list.push({ type: 'CLOSE' }, { type: 'RECONNECT' });
    // The modern era has no GET stream to lose or to be refused.
    list.push({ type: 'CONNECTION_LOST', error: 'socket hang up' });
    if (!modern) list.push({ type: 'LISTENER_LOST', error: 'lost' }, { type: 'LISTENER_REFUSED_SESSION', status: 404 });
    if (snapshot.matches({ ready: 'opening listener' }))
      list.push({ type: 'LISTENER_SETTLED' }, { type: OPEN_TIMEOUT });
    else {
      // Evidence comes back on requests, and requests are on the wire only while serving. Modern: a
      // -32022 or a broken exchange always names the current discovery (no older one is on the wire).
      list.push({ type: PROVEN });
      list.push({ type: 'SESSION_EXPIRED', generation });
      if (!modern) list.push({ type: 'SESSION_EXPIRED', generation: generation - 1 });
      list.push({ type: 'SESSION_IN_DOUBT', generation, evidence: 'HTTP 400' });
      if (!modern) list.push({ type: 'SESSION_IN_DOUBT', generation: generation - 1, evidence: 'HTTP 400' });
      list.push({ type: 'SERVER_UNREACHABLE', error: 'server unreachable (ECONNREFUSED)' });
      list.push({ type: 'AUTHORIZATION_REQUIRED', error: 'HTTP 401: authorization required' });
    }
  }
  if (children.includes('probe')) {
    list.push(done('probe', { verdict: 'alive' }));
    // A modern probe (server/discover) cannot find a session lost: there is none.
    if (!modern) list.push(done('probe', { verdict: 'session lost', evidence: 'HTTP 400 to a ping' }));
    list.push(
      done('probe', { verdict: 'unreachable', error: 'server unreachable' }),
      done('probe', { verdict: 'unauthorized', error: 'HTTP 401' }),
    );
    list.push({ type: 'SESSION_EXPIRED', generation });
    if (!modern) list.push({ type: 'SESSION_EXPIRED', generation: generation - 1 });
    list.push({ type: 'SERVER_UNREACHABLE', error: 'server unreachable (ECONNREFUSED)' });
    list.push({ type: 'CONNECTION_LOST', error: 'socket hang up' }, { type: 'CLOSE' }, { type: 'RECONNECT' });
  }
  if (snapshot.matches('reconnecting'))
    list.push(
      { type: 'RESTART' },
      { type: 'GIVE_UP', reason: 'restart budget spent' },
      { type: 'GIVE_UP', reason: 'unsupported protocol version', fatal: true },
    );
  if (snapshot.matches({ failed: 'waiting to revive' })) list.push({ type: REVIVE });
  return list;
}

export const runtimeSpec: ModelSpec = { ...connectionSpec(), events };
/** The default era preference: every connection starts with a `server/discover` probe. */
export const autoEraRuntimeSpec: ModelSpec = { ...connectionSpec(connectionMachine, AUTO_ERA_INPUT), events };

/**
 * Under `auto`, every path that goes through `discovering` or the modern era: a path is kept when
 * its last step leaves or enters `discovering`, or happens while the era is latched modern (the
 * legacy paths after a legacy verdict are the pinned suite's, behind one more step).
 */
export function autoEraPaths(): ModelPath[] {
  return transitionPaths(autoEraRuntimeSpec, (steps) => {
    const before = steps.at(-2)?.state;
    const after = steps.at(-1)!.state;
    return (
      before !== undefined &&
      (before.matches('discovering') || after.matches('discovering') || before.context.latchedEra === 'modern')
    );
  });
}

/** Walks one path on a real supervisor over the scripted transport, checking every step. */
export async function walk(
  path: ModelPath,
  coverage: Coverage,
  protocolVersion: 'legacy' | 'auto' = 'legacy',
): Promise<void> {
  const run = new RuntimeRun(coverage, protocolVersion);
  try {
    await flush();
    expectSameState(run, path.steps[0]!.state, 'initial state');
    for (let index = 1; index < path.steps.length; index++) {
      const step = path.steps[index]!;
      const before = path.steps[index - 1]!.state;
      let where = `step ${index} (${describeEvent(step.event)})`;
      await run.prologue();
      const settledBefore = run.book.settled();
      await run.realize(step.event, before);
      await flush();
      let reached = step;
      // A state the runtime leaves by itself: the model's next step is that event, already taken.
      const passing = passesByItself(step.state);
      if (passing) {
        const next = path.steps[index + 1];
        expect(
          next?.event.type ?? passing.type,
          `${where}: the model leaves ${JSON.stringify(step.state.value)} by ${passing.type}`,
        ).toBe(passing.type);
        if (next) {
          reached = next;
          index++;
          where += ` then ${describeEvent(next.event)} by itself`;
        } else expectPassedBy(run, passing, where);
      }
      if (!passing || reached !== step) expectSameState(run, reached.state, where);
      if (protocolVersion === 'auto') run.wire.check(where, step.event, before, reached.state);
      const serving = run.snapshot().matches({ ready: 'serving' });
      run.book.check(where, serving || run.servedDuringStep, settledBefore);
    }
    // Then the server comes back: nothing that waited may be left behind.
    run.book.clearAllowances();
    const settledBefore = run.book.settled();
    const recovered = await run.recover();
    run.book.check('after recovery', recovered, settledBefore);
    if (protocolVersion === 'auto' && recovered) run.wire.checkReissues('after recovery');
  } finally {
    await run.stop();
  }
}

/** The path ends where the runtime moves on by itself: it has (serving, or closed). */
function expectPassedBy(run: RuntimeRun, passing: AnyEventObject, where: string): void {
  if (passing.type === 'LISTENER_SETTLED')
    expect(run.snapshot().value, `${where}: no GET stream to wait for`).toEqual({ ready: 'serving' });
  else expect(run.snapshot().status, `${where}: no DELETE to wait for`).toBe('done');
}

/** Whether requests wait decides `hurrying` (the pure model has no requests): either is the model's backoff. */
function backoffAsModel(value: unknown): unknown {
  const text = JSON.stringify(value);
  if (text === '{"reconnecting":"hurrying"}') return { reconnecting: 'backing off' };
  if (text === '{"failed":"hurrying to revive"}') return { failed: 'waiting to revive' };
  return value;
}

function expectSameState(run: RuntimeRun, model: AnyMachineSnapshot, where: string): void {
  const actual = run.snapshot();
  expect(actual.status, `${where}: status`).toBe(model.status);
  expect(backoffAsModel(actual.value), `${where}: the runtime's connection state`).toEqual(model.value);
  expect(actual.context.session === undefined, `${where}: has no session`).toBe(model.context.session === undefined);
  expect(actual.context.fatal, `${where}: fatal`).toBe(model.context.fatal);
  expect(actual.context.latchedTransport, `${where}: latched transport`).toBe(model.context.latchedTransport);
  expect(
    run.lastErrorAtReady.filter((e) => e !== undefined),
    `${where}: status().lastError is cleared when a transition listener hears ready`,
  ).toEqual([]);
  expect(run.handle.status().state, `${where}: status() names the state`).toBe(
    typeof model.value === 'string' ? model.value : Object.keys(model.value)[0],
  );
}
