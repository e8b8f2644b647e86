import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The files that spawn processes or build the package run longest: started first, so they run
 * beside the short files instead of alone at the end. A clean clone has no timing cache.
 */
const LONG_FIRST = ['test/cli/commands.test.ts', 'test/package/', 'test/adapters/package.test.ts', 'test/cli/'];

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
    // The soak tests (test/soak/) run apart: `npm run test:soak` (vitest.soak.config.ts).
    exclude: ['**/node_modules/**', 'test/soak/**'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // A worker process runs file after file and keeps the modules it loaded (src/, machines/,
    // servers/, the SDKs): loading them again for every file was half the suite's CPU. Files
    // leave no global state behind (fake timers, telemetry providers and module mocks are
    // restored by the files that set them).
    isolate: false,
    // Most files wait on servers, child processes and timers, not the CPU: vitest's default on a
    // 2-core machine (cores - 1: one file at a time) left a core idle while one file waited.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: LongFilesFirst },
    // expect.poll waits for something that must happen; 1 s (vitest's default) is not enough on a
    // busy 2-core machine. A poll that never holds still fails.
    expect: { poll: { timeout: 10_000 } },
  },
});
