/**
 * A restarted process finds its state in the store (issue #26): process A (a real child process)
 * connects to a 2025-era task server and a 2026-07-28 server, lists the catalog, starts a task,
 * and exits; process B starts fresh on the same store (a file, then Redis). B sends no
 * `server/discover` to the known 2025-era server, serves the modern server's shareable tool list
 * from the store, and resumes A's task, which completes after the restart and is read in B.
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModernFixture, type ModernFixture } from '../../servers/modern-fixture.js';
import { startSdkTaskServer, type SdkTaskServer } from '../../servers/sdk-task-server.js';
import { startRedisServer, type RedisServer } from '../store/redis-server.js';

const WORKER = fileURLToPath(new URL('./restart-worker.ts', import.meta.url));

interface Message {
  type: 'started' | 'resumed' | 'result' | 'error';
  [field: string]: unknown;
}

/** One life: forks the worker, collects its messages, resolves them when it exited (code 0). */
function life(phase: 'start' | 'resume', store: string, onMessage: (message: Message) => void = () => {}) {
  const child = fork(WORKER, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, STORE: store, LEGACY_URL: legacy.url, MODERN_URL: modern.url, PHASE: phase },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const messages: Message[] = [];
  child.on('message', (message: Message) => {
    messages.push(message);
    onMessage(message);
  });
  return new Promise<Message[]>((resolve, reject) =>
    child.once('exit', (code, signal) =>
      code === 0
        ? resolve(messages)
        : reject(new Error(`worker ${phase} exited ${code ?? signal}: ${JSON.stringify(messages)}`)),
    ),
  );
}

let legacy: SdkTaskServer;
let modern: ModernFixture;
let redis: RedisServer;
let dir: string;
beforeAll(async () => {
  [legacy, modern, redis, dir] = await Promise.all([
    startSdkTaskServer({ stateful: false, pollIntervalMs: 50 }),
    startModernFixture([{ name: 'search', inputSchema: { type: 'object' } }]),
    startRedisServer(),
    mkdtemp(join(tmpdir(), 'soak-restart-')),
  ]);
  // The modern server lets its list be shared for a minute (SEP-2549).
  modern.ttlMs = 60_000;
  modern.cacheScope = 'public';
});
afterAll(async () => {
  await Promise.all([legacy.close(), modern.close(), redis.stop(), rm(dir, { recursive: true, force: true })]);
});

const TOOLS = ['legacy/build', 'legacy/deploy', 'legacy/echo', 'legacy/summarize', 'modern/search'];
const sent = (method: string) => legacy.requests[method] ?? 0;

describe.each([
  ['file', () => `file:${join(dir, 'store.json')}`],
  ['redis', () => `redis:${redis.url}`],
])('a process restarted on the %s store', (_name, storeOf) => {
  it('finds the era verdict, the catalog and the task reference', async () => {
    const store = storeOf();
    const before = { discover: sent('server/discover'), legacyLists: sent('tools/list') };
    const modernListsBefore = modern.posts('tools/list').length;

    const [started] = await life('start', store);
    expect(started?.type, JSON.stringify(started)).toBe('started');
    const reference = started!['reference'] as { taskId: string; era: string };
    expect(reference.era).toBe('legacy');
    expect(started!['tools']).toEqual(TOOLS);
    // A's first contact: one failed server/discover, then initialize; each server listed once.
    expect(sent('server/discover') - before.discover).toBe(1);
    expect(modern.posts('tools/list').length - modernListsBefore).toBe(1);
    expect(await legacy.status(reference.taskId)).toBe('working');

    const afterA = {
      discover: sent('server/discover'),
      legacyLists: sent('tools/list'),
      modernLists: modern.posts('tools/list').length,
    };
    const messages = await life('resume', store, (message) => {
      // B holds the task: now its work ends (after the restart).
      if (message.type === 'resumed') void legacy.complete(reference.taskId);
    });
    const resumed = messages.find((m) => m.type === 'resumed');
    const result = messages.find((m) => m.type === 'result');
    expect(messages.filter((m) => m.type === 'error')).toEqual([]);
    expect(resumed).toMatchObject({ resumable: [reference], status: 'working' });
    expect(resumed!['tools']).toEqual(TOOLS);
    expect(result).toMatchObject({ result: { content: [{ type: 'text', text: 'built app' }] }, left: [] });

    const inB = {
      discover: sent('server/discover') - afterA.discover,
      legacyLists: sent('tools/list') - afterA.legacyLists,
      modernLists: modern.posts('tools/list').length - afterA.modernLists,
    };
    console.log(
      `${_name} store, process B sent: ${JSON.stringify(inB)} (A sent 1 server/discover, 1 tools/list to each)`,
    );
    // No server/discover to the known 2025-era server; the modern list came from the store. A
    // 2025-era list carries no ttlMs (SEP-2549 is 2026-07-28), so it is listed again: 1.
    expect(inB).toEqual({ discover: 0, legacyLists: 1, modernLists: 0 });
  });
});
