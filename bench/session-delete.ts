/**
 * CPU of the agent process per session DELETE, the way `stop()` sends them (256 at a time over
 * one origin's message pool, 128 sockets): `pool.request` with a body dumped and an
 * `AbortSignal.timeout` per DELETE (before branch `fast10k`) against `sendDelete`
 * (src/transports/http/session-delete.ts: undici's `dispatch`, a handler of its own, one shared
 * deadline), in interleaved batches in one process, against bench/server.ts (json mode).
 *
 *   node .bench-build/bench/session-delete.js [deletes per batch=4000] [rounds=4]
 *
 * Prints `{"perBatch", "rounds", "requestUs": [...], "dispatchUs": [...], "ratio"}`: µs of CPU
 * (user + system) per DELETE in each batch, and the median of dispatch / request.
 */
import { Pool } from 'undici';
import { sendDelete } from '../src/transports/http/session-delete.js';
import { startServer } from './measure.js';

const AT_ONCE = 256;
const TIMEOUT_MS = 2_000;

async function viaRequest(pool: Pool, path: string): Promise<void> {
  const { body } = await pool.request({
    path,
    method: 'DELETE',
    headers: { accept: 'application/json, text/event-stream' },
    signal: AbortSignal.timeout(TIMEOUT_MS),
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });
  await body.dump();
}

const viaDispatch = (pool: Pool, path: string): Promise<void> =>
  sendDelete(pool, path, { accept: 'application/json, text/event-stream' }, TIMEOUT_MS);

/** µs of CPU per DELETE over `n` of them, AT_ONCE in flight. */
async function batch(pool: Pool, n: number, send: (pool: Pool, path: string) => Promise<void>): Promise<number> {
  let next = 0;
  const cpu = process.cpuUsage();
  const worker = async () => {
    while (next < n) await send(pool, `/mcp/${next++}`);
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  const used = process.cpuUsage(cpu);
  return (used.user + used.system) / n;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const perBatch = Number(process.argv[2] ?? 4_000);
const rounds = Number(process.argv[3] ?? 4);
const server = await startServer('json');
const pool = new Pool(server.origin, { connections: 128, pipelining: 1, keepAliveTimeout: 30_000, bodyTimeout: 0 });
try {
  await batch(pool, 1_000, viaRequest); // warm-up: sockets open, code compiled
  await batch(pool, 1_000, viaDispatch);
  const requestUs: number[] = [];
  const dispatchUs: number[] = [];
  for (let round = 0; round < rounds; round++) {
    requestUs.push(await batch(pool, perBatch, viaRequest));
    dispatchUs.push(await batch(pool, perBatch, viaDispatch));
  }
  const round1 = (values: number[]) => values.map((v) => Math.round(v * 10) / 10);
  console.log(
    JSON.stringify({
      perBatch,
      rounds,
      requestUs: round1(requestUs),
      dispatchUs: round1(dispatchUs),
      ratio: Math.round((median(dispatchUs) / median(requestUs)) * 100) / 100,
    }),
  );
} finally {
  await pool.destroy();
  server.child.kill();
}
