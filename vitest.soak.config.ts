import { defineConfig } from 'vitest/config';

/**
 * The soak tests: many real processes, a real Redis, a real browser, thousands of servers, run for
 * seconds of wall time each. `.ci/run` runs them after the suite (`npm run test:soak`) and counts
 * them in its summary; `npm test` leaves them out so that it stays within its time budget.
 */
export default defineConfig({
  test: {
    include: ['test/soak/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One file at a time: each one loads the machine on its own and measures what it sees.
    maxWorkers: 1,
    fileParallelism: false,
    expect: { poll: { timeout: 30_000 } },
  },
});
