/**
 * Registers a machine's model-based tests: one `it` per generated path, then the coverage gate
 * that fails listing every transition no path took.
 */
import { describe, expect, it } from 'vitest';
import { allTransitionKeys, Coverage } from './coverage.js';
import { replay, transitionPaths, type ModelPath, type ModelSpec } from './runner.js';

export interface ModelSuiteOptions {
  /**
   * Transitions that no run of the machine can take, each with the reason. The gate checks that
   * they exist and are indeed never taken, so the list cannot go stale silently.
   */
  unreachable?: Record<string, string>;
}

export function modelSuite(name: string, spec: ModelSpec, options: ModelSuiteOptions = {}): Coverage {
  const coverage = new Coverage(spec.machine);
  const paths = transitionPaths(spec);
  const unreachable = options.unreachable ?? {};
  const attempted = new Set<ModelPath>();
  const run = (path: ModelPath) => {
    attempted.add(path);
    return replay(spec, path, coverage);
  };

  describe(`${name}: model paths`, () => {
    it('the model has paths', () => {
      expect(paths.length).toBeGreaterThan(0);
    });
    for (const path of paths) {
      it(path.name, () => run(path));
    }
  });

  describe(`${name}: transition coverage`, () => {
    it('every transition of the machine was taken by some path', async () => {
      // Paths filtered out of this run (-t, shuffling) are replayed here, so the gate stands alone.
      for (const path of paths) if (!attempted.has(path)) await run(path);
      const all = allTransitionKeys(spec.machine);
      for (const key of Object.keys(unreachable)) {
        expect(all, `known-unreachable transition no longer exists: ${key}`).toContain(key);
        expect(coverage.taken.has(key), `known-unreachable transition was taken: ${key}`).toBe(false);
      }
      const missing = coverage.untaken().filter((key) => !(key in unreachable));
      const { covered, total } = coverage.summary();
      console.info(`[model coverage] ${name}: ${covered}/${total} transitions (${Object.keys(unreachable).length} known unreachable), ${paths.length} paths`);
      expect(missing, `transitions never taken:\n${missing.join('\n')}`).toEqual([]);
    });
  });

  return coverage;
}
