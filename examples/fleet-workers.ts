/**
 * Several worker processes sharing one OAuth credential through a store (docs/fleets.md).
 *
 *   npx tsx examples/fleet-workers.ts                                   # fileStore in a temp dir
 *   REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/fleet-workers.ts  # redisStore
 *
 * The parent starts a test authorization server (access tokens live 1.5 s, a refresh token works
 * once and its reuse revokes the grant) and forks WORKERS copies of this file. Each worker
 * connects with the same store, calls a tool for SECONDS, and reports. The parent prints what the
 * server counted: one sign-in, about one refresh per expiry, no reuse.
 */
import { fork } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect, fileStore, type Store } from 'mcp-supervisor';
import { redisStore } from 'mcp-supervisor/redis';
// The repository's test authorization server: this example runs in a clone (examples/README.md).
import { approveAtOnce, startOAuthServer } from '../servers/oauth-server.js';

const WORKERS = Number(process.env['WORKERS'] ?? 4);
const SECONDS = Number(process.env['SECONDS'] ?? 10);

if (process.env['MCP_URL']) {
  // A worker: one process of the fleet.
  const store: Store = process.env['REDIS_URL']
    ? redisStore({ url: process.env['REDIS_URL'] })
    : fileStore(process.env['STORE_FILE']!);
  const server = await connect(
    {
      url: process.env['MCP_URL'],
      // A real app signs in through a browser: createLoopbackRedirect() (docs/authorization.md).
      auth: { redirectUri: 'http://127.0.0.1:1/callback', onRedirect: approveAtOnce, refreshMarginMs: 400 },
    },
    { store },
  );
  let calls = 0;
  const until = Date.now() + SECONDS * 1_000;
  while (Date.now() < until) {
    // The test server's echo takes `text` (server-everything's, in the other examples, `message`).
    await server.callTool('echo', { text: `from ${process.pid}` });
    calls++;
    await new Promise((wait) => setTimeout(wait, 50));
  }
  await server.close();
  await store.close?.();
  console.log(`worker ${process.pid}: ${calls} calls answered`);
} else {
  const oauth = await startOAuthServer({ refreshTokens: true, revokeOnReuse: true, accessTokenMs: 1_500 });
  const storeFile = join(mkdtempSync(join(tmpdir(), 'fleet-')), 'store.json');
  console.log(`${WORKERS} workers on ${process.env['REDIS_URL'] ? 'Redis' : storeFile}, ${SECONDS} s`);
  const self = fileURLToPath(import.meta.url);
  const workers = Array.from({ length: WORKERS }, () =>
    fork(self, [], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, MCP_URL: oauth.mcpUrl, STORE_FILE: storeFile },
    }),
  );
  await Promise.all(workers.map((worker) => new Promise((done) => worker.on('exit', done))));
  const { signIns, refreshes, reuses, revokedGrants } = oauth.counts;
  console.log(
    `the authorization server saw ${signIns} sign-in(s), ${refreshes} refreshes, ${reuses} reuses, ${revokedGrants} revoked grants`,
  );
  await oauth.close();
}
