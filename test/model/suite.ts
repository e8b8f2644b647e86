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
  /** The same machine from other inputs (e.g. a feature switched off); their paths count toward the gate. */
  variants?: Array<{ label: string; spec: ModelSpec }>;
}

export function modelSuite(name: string, spec: ModelSpec, options: ModelSuiteOptions = {}): Coverage {
  const coverage = new Coverage(spec.machine);
  const runs = [{ label: '', spec }, ...(options.variants ?? [])].flatMap((variant) =>
    transitionPaths(variant.spec).map((path) => ({
      path,
      spec: variant.spec,
      name: variant.label ? `[${variant.label}] ${path.name}` : path.name,
    })),
  );
  const paths = runs.map((r) => r.path);
  const unreachable = options.unreachable ?? {};
  const attempted = new Set<ModelPath>();
  const run = (entry: (typeof runs)[number]) => {
    attempted.add(entry.path);
    return replay(entry.spec, entry.path, coverage);
  };

  describe(`${name}: model paths`, () => {
    it('the model has paths', () => {
      expect(paths.length).toBeGreaterThan(0);
    });
    for (const entry of runs) {
      it(entry.name, () => run(entry));
    }
  });

  describe(`${name}: transition coverage`, () => {
    it('every transition of the machine was taken by some path', async () => {
      // Paths filtered out of this run (-t, shuffling) are replayed here, so the gate stands alone.
      for (const entry of runs) if (!attempted.has(entry.path)) await run(entry);
      const all = allTransitionKeys(spec.machine);
      for (const key of Object.keys(unreachable)) {
        expect(all, `known-unreachable transition no longer exists: ${key}`).toContain(key);
        expect(coverage.taken.has(key), `known-unreachable transition was taken: ${key}`).toBe(false);
      }
      const missing = coverage.untaken().filter((key) => !(key in unreachable));
      const { covered, total } = coverage.summary();
      console.info(
        `[model coverage] ${name}: ${covered}/${total} transitions (${Object.keys(unreachable).length} known unreachable), ${paths.length} paths`,
      );
      expect(missing, `transitions never taken:\n${missing.join('\n')}`).toEqual([]);
    });
  });

  return coverage;
}
