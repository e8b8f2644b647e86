import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // expect.poll waits for something that must happen; 1 s (vitest's default) is not enough on a
    // busy 2-core machine. A poll that never holds still fails.
    expect: { poll: { timeout: 10_000 } },
  },
});
