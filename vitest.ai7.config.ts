/**
 * The AI SDK adapter's tests with AI SDK 7 (`ai-v7`, an npm alias of ai@7): `ai` and `ai/test`
 * resolve to it, in the tests and in src/adapters alike; and the supervised transport's with
 * `@ai-sdk/mcp` 2.x (`ai-mcp-v2`). Both need Node >= 22: `npm run test:ai7` runs this under a
 * Node 22 from the npm registry.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: {
    alias: [
      { find: /^ai(\/.*)?$/, replacement: 'ai-v7$1' },
      { find: /^@ai-sdk\/mcp$/, replacement: 'ai-mcp-v2' },
    ],
  },
  test: {
    include: ['test/adapters/ai-sdk.test.ts', 'test/adapters/ai-sdk-transport.test.ts'],
    env: { AI_SDK_MAJOR: '7' },
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
