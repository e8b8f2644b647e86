/**
 * One worker process of the shared-credential soak and bench: connects to the OAuth-protected
 * fixture with the given store (file or Redis), calls a tool in a loop until told to stop (or
 * for DURATION_MS), and reports over IPC: `ready`, `refreshing` (a refresh left for the token
 * endpoint: the soak SIGKILLs a process there), and at the end its counts.
 *
 * Env: MCP_URL, STORE (`file:<path>` | `redis:<url>` | `none`: no store, each process its own
 * credential, as before stores), DURATION_MS, PAUSE_MS, MARGIN_MS.
 */
import { subscribe } from 'node:diagnostics_channel';
import { connect, fileStore, type Store } from '../../src/index.js';
import { redisStore } from '../../src/store/redis/index.js';
import { approveAtOnce } from '../../servers/oauth-server.js';

const env = (name: string, fallback?: string): string => {
  const value = process.env[name] ?? fallback;
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const storeSpec = env('STORE');
const store: Store | undefined = storeSpec.startsWith('redis:')
  ? redisStore({ url: storeSpec.slice('redis:'.length) })
  : storeSpec.startsWith('file:')
    ? fileStore(storeSpec.slice('file:'.length))
    : undefined;
const durationMs = Number(env('DURATION_MS', '20000'));
const pauseMs = Number(env('PAUSE_MS', '50'));
const send = (message: object) => process.send?.(message);

// A refresh leaving for the token endpoint (after the first sign-in every POST there is one).
let signedIn = false;
subscribe('undici:request:create', (message) => {
  const { request } = message as { request: { method: string; path: string } };
  if (signedIn && request.method === 'POST' && request.path.endsWith('/token'))
    send({ type: 'refreshing', at: Date.now() });
});

const warnings: string[] = [];
const started = Date.now();
const server = await connect(
  {
    url: env('MCP_URL'),
    requestTimeoutMs: 60_000,
    auth: {
      redirectUri: 'http://127.0.0.1:1/callback',
      onRedirect: approveAtOnce,
      refreshMarginMs: Number(env('MARGIN_MS', '400')),
    },
  },
  {
    store,
    logger: {
      debug() {},
      info() {},
      error() {},
      warn: (fields) => warnings.push(String(fields['event'])),
    },
  },
);
signedIn = true;
send({ type: 'ready', readyMs: Date.now() - started });

let ok = 0;
let failed = 0;
const latencies: number[] = [];
const errors: string[] = [];
let stopping = false;
process.on('message', (message) => {
  if ((message as { type?: string }).type === 'stop') stopping = true;
});
const until = Date.now() + durationMs;
while (!stopping && Date.now() < until) {
  try {
    const sent = performance.now();
    await server.callTool('echo', { text: `${process.pid}` });
    latencies.push(performance.now() - sent);
    ok++;
  } catch (error) {
    failed++;
    if (errors.length < 5) errors.push((error as Error).message);
  }
  await new Promise((wait) => setTimeout(wait, pauseMs));
}
await server.close();
await store?.close?.();
latencies.sort((a, b) => a - b);
const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
send({ type: 'done', ok, failed, errors, warnings, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1) });
process.disconnect?.();
