/**
 * The connection machine's paths walked through the real runtime (issue #15, item 6): every
 * path of the model, produced over a scripted transport, with the request rules (held, replayed,
 * failed with OutcomeUnknownError, ...) asserted on real requests after every step, and the
 * gate: every transition of the connection machine taken by the runtime.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { connectionMachine } from '../../machines/connection.machine.js';
import { allTransitionKeys, Coverage } from './coverage.js';
import { transitionPaths } from './runner.js';
import { autoEraPaths, runtimeSpec, walk } from './runtime/connection-runtime.spec.js';

/** Transitions the runtime cannot take, with the reason (the pure model takes them). */
const UNREACHABLE: Record<string, string> = {
  '#connection.reconnecting.waiting for origin --xstate.error.actor.origin[0]--> #connection.connecting':
    "an origin's turn never rejects",
  '#connection.failed.reviving --xstate.error.actor.origin[0]--> #connection.connecting':
    "an origin's turn never rejects",
  '#connection.probing --xstate.error.actor.probe[0]--> #connection.reconnecting':
    'probeSession() turns every failure into a verdict; the probe actor never rejects',
};

/**
 * The idle backoff: the runtime walks issue requests in every step, so they always wait and the
 * runtime always hurries (the pure model takes these; test/integration/healing/origin.test.ts
 * takes them on real servers).
 */
const IDLE_ONLY: Record<string, string> = {
  '#connection.reconnecting.backing off --RESTART[0]--> #connection.reconnecting.waiting for origin':
    "an idle server's restart",
  '#connection.failed.waiting to revive --xstate.after.revive delay.connection.failed.waiting to revive[0]--> #connection.failed.reviving':
    "an idle server's revival",
  '#connection.reconnecting.hurrying --xstate.after.waiting reconnect delay.connection.reconnecting.hurrying[0]--> #connection.reconnecting.waiting for origin':
    "the script's RESTART comes before the cap",
};

/**
 * The restart window of a connection that decides its restarts itself: the walks' script plays the
 * parent (RESTART, GIVE_UP), so no window of the connection's own passes here (the pure model's
 * `own restarts` variant takes it, and its timing is a scenario there).
 */
const OWN_RESTARTS_ONLY: Record<string, string> = {
  "#connection --RESTART_WINDOW_PASSED[0]--> (stays) if 'is current window'": 'a restart of its own left the window',
};

/**
 * A change of what to listen for: the scripted server offers nothing to listen for (no listChanged,
 * no resources.subscribe, no tasks), so no caller can make one (the pure model takes these;
 * test/integration/modern/lazy-listener.test.ts takes them on a real server).
 */
const LISTEN_CHANGES: Record<string, string> = {
  "#connection.ready --LISTEN_WANTED[0]--> (stays) if 'isListening'": 'a subscription change told to the listener',
  '#connection.ready --LISTEN_WANTED[1]--> (stays)': 'a subscription change that starts a listener',
};

/**
 * Events subscriptions (SEP-3415): the scripted server offers no events, so none is spawned here
 * (the pure model takes these; test/integration/events takes them on a real server).
 */
const EVENTS_SUBSCRIPTIONS: Record<string, string> = {
  '#connection --SUBSCRIBE[0]--> (stays)': 'an events subscription spawned',
  '#connection --xstate.done.actor.subscription.*[0]--> (stays)': 'an ended subscription forgotten',
};

/**
 * The era transitions (issue 18): the legacy-pinned paths never take them; the `auto era` variant
 * (the default `protocolVersion`: every connection probes with `server/discover`) must take them all.
 */
const ERA_TRANSITIONS: Record<string, string> = {
  '#connection.connecting.opening transport --xstate.done.actor.transport[1]--> #connection.discovering':
    'the server/discover probe under auto',
  '#connection.discovering --CONNECTION_LOST[0]--> #connection.reconnecting': 'lost while discovering',
  "#connection.discovering --xstate.done.actor.discover[0]--> #connection.ready if 'found modern server'":
    'a modern server',
  '#connection.discovering --xstate.done.actor.discover[1]--> #connection.initializing': 'a 2025-era server under auto',
  "#connection.discovering --xstate.error.actor.discover[0]--> #connection.authorizing if 'needs authorization'":
    'a 401 to the probe',
  '#connection.discovering --xstate.error.actor.discover[1]--> #connection.reconnecting': 'the probe failed',
  "#connection.expired --(always)[0]--> #connection.discovering if 'era is modern'":
    'a modern server changed its versions',
};

const coverage = new Coverage(connectionMachine);
const paths = transitionPaths(runtimeSpec);
const walked = new Set<string>();
const autoPaths = autoEraPaths();
const eraCoverage = new Coverage(connectionMachine);
const autoWalked = new Set<string>();

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('connection through the runtime: model paths', () => {
  it('the model has paths', () => {
    expect(paths.length).toBeGreaterThan(0);
  });
  for (const path of paths) {
    it(path.name, async () => {
      walked.add(path.name);
      await walk(path, coverage);
    });
  }
});

describe('connection through the runtime, auto era: model paths', () => {
  it('the model has paths through discovering', () => {
    expect(autoPaths.length).toBeGreaterThan(0);
  });
  for (const path of autoPaths) {
    it(path.name, async () => {
      autoWalked.add(path.name);
      await walk(path, eraCoverage, 'auto');
    });
  }
});

describe('connection through the runtime: transition coverage', () => {
  it('every era transition was taken by the runtime under auto', async () => {
    for (const path of autoPaths) if (!autoWalked.has(path.name)) await walk(path, eraCoverage, 'auto');
    const missing = Object.keys(ERA_TRANSITIONS).filter((key) => !eraCoverage.taken.has(key));
    const { covered, total } = eraCoverage.summary();
    const era = Object.keys(ERA_TRANSITIONS).length - missing.length;
    console.info(
      `[model coverage] connection (runtime, auto era): ${covered}/${total} transitions, era transitions ${era}/${Object.keys(ERA_TRANSITIONS).length}, ${autoPaths.length} paths`,
    );
    expect(missing, `era transitions never taken:\n${missing.join('\n')}`).toEqual([]);
  });

  it('every transition of the connection machine was taken by the runtime', async () => {
    for (const path of paths) if (!walked.has(path.name)) await walk(path, coverage);
    for (const path of autoPaths) if (!autoWalked.has(path.name)) await walk(path, eraCoverage, 'auto');
    const all = allTransitionKeys(connectionMachine);
    for (const key of Object.keys(ERA_TRANSITIONS))
      expect(all, `era transition no longer exists: ${key}`).toContain(key);
    const taken = (key: string) => coverage.taken.has(key) || eraCoverage.taken.has(key);
    for (const key of Object.keys(UNREACHABLE)) {
      expect(all, `known-unreachable transition no longer exists: ${key}`).toContain(key);
      expect(taken(key), `known-unreachable transition was taken: ${key}`).toBe(false);
    }
    for (const key of Object.keys({ ...IDLE_ONLY, ...OWN_RESTARTS_ONLY, ...LISTEN_CHANGES, ...EVENTS_SUBSCRIPTIONS }))
      expect(all, `idle-only, own-restart or listen-change transition no longer exists: ${key}`).toContain(key);
    const missing = all.filter(
      (key) =>
        !taken(key) &&
        !(key in UNREACHABLE) &&
        !(key in IDLE_ONLY) &&
        !(key in OWN_RESTARTS_ONLY) &&
        !(key in LISTEN_CHANGES) &&
        !(key in EVENTS_SUBSCRIPTIONS),
    );
    const { covered, total } = coverage.summary();
    console.info(
      `[model coverage] connection (runtime): ${covered}/${total} transitions pinned legacy (${paths.length} paths), ${all.filter(taken).length}/${all.length} with the auto-era paths (${Object.keys(UNREACHABLE).length} known unreachable)`,
    );
    expect(missing, `transitions never taken:\n${missing.join('\n')}`).toEqual([]);
  });
});
