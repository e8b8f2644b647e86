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
import { runtimeSpec, walk } from './runtime/connection-runtime.spec.js';

/** Transitions the runtime cannot take, with the reason (the pure model takes them). */
const UNREACHABLE: Record<string, string> = {
  '#connection.probing --xstate.error.actor.probe[0]--> #connection.reconnecting':
    'probeSession() turns every failure into a verdict; the probe actor never rejects',
};

/**
 * The era transitions (issue 18): the runtime suite pins the legacy era, as the model's INPUT does,
 * because its scripted transport does not speak the modern wire yet. They are taken by the pure
 * model's `auto era` variant (connection.model.test.ts) and by the runtime against real v2 servers
 * (test/integration/modern). TODO: an `auto era` variant of this suite.
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

describe('connection through the runtime: transition coverage', () => {
  it('every transition of the connection machine was taken by the runtime', async () => {
    for (const path of paths) if (!walked.has(path.name)) await walk(path, coverage);
    const all = allTransitionKeys(connectionMachine);
    for (const key of Object.keys(ERA_TRANSITIONS))
      expect(all, `era transition no longer exists: ${key}`).toContain(key);
    for (const key of Object.keys(UNREACHABLE)) {
      expect(all, `known-unreachable transition no longer exists: ${key}`).toContain(key);
      expect(coverage.taken.has(key), `known-unreachable transition was taken: ${key}`).toBe(false);
    }
    const missing = coverage.untaken().filter((key) => !(key in UNREACHABLE) && !(key in ERA_TRANSITIONS));
    const { covered, total } = coverage.summary();
    console.info(
      `[model coverage] connection (runtime): ${covered}/${total} transitions (${Object.keys(UNREACHABLE).length} known unreachable, ${Object.keys(ERA_TRANSITIONS).length} era transitions walked elsewhere), ${paths.length} paths`,
    );
    expect(missing, `transitions never taken:\n${missing.join('\n')}`).toEqual([]);
  });
});
