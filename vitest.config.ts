import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that run long because they spawn many processes or build the package (measured with
 * `--reporter=verbose`): started first, so none of them runs alone at the end. A clean clone has
 * no timing cache, and vitest would otherwise start the largest files first.
 */
const LONG_FIRST = [
  'test/bench-smoke.test.ts',
  'test/package/',
  'test/cli/',
  'test/adapters/package.test.ts',
  'test/model/runner.selfcheck.test.ts',
  'test/integration/healing/killed-process.test.ts',
];

class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification): number => {
      const path = relative(spec.project.config.root, spec.moduleId).replaceAll('\\', '/');
      const index = LONG_FIRST.findIndex((prefix) => path.startsWith(prefix));
      return index < 0 ? LONG_FIRST.length : index;
    };
    return sorted
      .map((spec, order) => ({ spec, order, rank: rank(spec) }))
      .sort((a, b) => a.rank - b.rank || a.order - b.order)
      .map(({ spec }) => spec);
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // A worker process runs file after file and keeps the modules it loaded (src/, machines/,
    // servers/, the SDKs): loading them again for every file was half the suite's CPU. Files
    // leave no global state behind (fake timers, telemetry providers and env are restored).
    isolate: false,
    // Most files wait on servers, child processes and timers, not the CPU: on a 2-core machine
    // vitest's default (cores - 1: one file at a time) left the CPU idle while one waited. Two
    // files at a time, not more: the timing-sensitive ones still get their share of a busy CPU.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: LongFilesFirst },
    // expect.poll waits for something that must happen; 1 s (vitest's default) is not enough on a
    // busy 2-core machine. A poll that never holds still fails.
    expect: { poll: { timeout: 10_000 } },
  },
});
