/**
 * One life of a process that restarts (restart-finds-state.test.ts): a supervisor on the given
 * store with a 2025-era task server (`legacy`) and a 2026-07-28 server (`modern`), lists the
 * catalog, then, by PHASE:
 *
 * - `start`: starts a task on `legacy`, reports its reference, stops and exits;
 * - `resume`: reports what it found in the store, resumes the task, tells the parent it waits,
 *   and reports the task's result once the parent let it complete.
 *
 * Env: STORE (`file:<path>` | `redis:<url>`), LEGACY_URL, MODERN_URL, PHASE. Reports over IPC.
 */
import { createSupervisor, fileStore, type Store } from '../../src/index.js';
import { redisStore } from '../../src/store/redis/index.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is required`);
  return value;
};
const spec = env('STORE');
const store: Store = spec.startsWith('redis:')
  ? redisStore({ url: spec.slice('redis:'.length) })
  : fileStore(spec.slice('file:'.length));
const send = (message: object) => process.send?.(message);

const sup = createSupervisor({
  servers: {
    legacy: { url: env('LEGACY_URL'), keepalive: false },
    modern: { url: env('MODERN_URL'), keepalive: false },
  },
  store,
});
try {
  await sup.start();
  const catalog = await sup.tools();
  const tools = catalog.tools.map((tool) => `${tool.server}/${tool.originalName}`).sort();
  const legacy = sup.server('legacy');
  if (env('PHASE') === 'start') {
    const task = await legacy.callToolAsTask('build', { target: 'app' });
    send({ type: 'started', tools, reference: task.reference });
  } else {
    const resumable = await legacy.tasks.resumable();
    const task = await legacy.tasks.resume(resumable[0]!);
    send({ type: 'resumed', tools, resumable, status: task.lastStatus?.status });
    const result = await task.result();
    send({ type: 'result', result, left: await legacy.tasks.resumable() });
  }
} catch (error) {
  send({ type: 'error', error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
} finally {
  await sup.stop();
  await store.close?.();
}
