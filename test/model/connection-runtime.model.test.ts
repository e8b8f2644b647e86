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
    for (const key of Object.keys(UNREACHABLE)) {
      expect(all, `known-unreachable transition no longer exists: ${key}`).toContain(key);
      expect(coverage.taken.has(key), `known-unreachable transition was taken: ${key}`).toBe(false);
    }
    const missing = coverage.untaken().filter((key) => !(key in UNREACHABLE));
    const { covered, total } = coverage.summary();
    console.info(
      `[model coverage] connection (runtime): ${covered}/${total} transitions (${Object.keys(UNREACHABLE).length} known unreachable), ${paths.length} paths`,
    );
    expect(missing, `transitions never taken:\n${missing.join('\n')}`).toEqual([]);
  });
});
