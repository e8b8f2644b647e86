/**
 * Task references in the store (issue #26): a task started by one supervisor is awaited,
 * cancelled or its result read through another sharing the same memoryStore (a restarted
 * process). Against the official SDK's 2025-11-25 task server; the work ends when the test says.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, createSupervisor, memoryStore, type Store, type Supervisor } from '../../src/index.js';
import { startSdkTaskServer, type SdkTaskServer } from '../../servers/sdk-task-server.js';

let server: SdkTaskServer;
beforeAll(async () => {
  server = await startSdkTaskServer({ stateful: false, pollIntervalMs: 20 });
});
afterAll(() => server.close());

const running: Supervisor[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((sup) => sup.stop().catch(() => {})));
});

async function supervise(store: Store | undefined) {
  const sup = createSupervisor({ servers: { s: { url: server.url, keepalive: false } }, ...(store ? { store } : {}) });
  running.push(sup);
  await sup.start();
  return sup.server('s');
}

describe('a task started by one process, picked up by another', () => {
  it('is found in the store by the restarted process, awaited to its result, and leaves the store', async () => {
    const store = memoryStore();
    const a = await supervise(store);
    const task = await a.callToolAsTask('build', { target: 'app' });
    const reference = task.reference!;
    expect(reference).toMatchObject({ era: 'legacy', taskId: task.taskId, operation: 'tools/call', tool: 'build' });
    await running[0]!.stop();

    const b = await supervise(store);
    await expect.poll(() => b.tasks.resumable()).toEqual([reference]);
    const resumed = await b.tasks.resume(reference);
    expect(resumed.lastStatus?.status).toBe('working');
    void server.complete(reference.taskId);
    expect((await resumed.result()).content).toEqual([{ type: 'text', text: 'built app' }]);
    await expect.poll(() => b.tasks.resumable()).toEqual([]);
  });

  it('is cancelled through the other process, by its id alone', async () => {
    const store = memoryStore();
    const a = await supervise(store);
    const task = await a.callToolAsTask('build', { target: 'web' });
    const b = await supervise(store);
    await expect.poll(async () => (await b.tasks.resumable()).length).toBe(1);
    const resumed = await b.tasks.resume(task.taskId!);
    expect(resumed.reference).toEqual(task.reference); // the tool came from the store
    expect((await resumed.cancel())?.status).toBe('cancelled');
    expect(await server.status(task.taskId!)).toBe('cancelled');
    await expect.poll(() => b.tasks.resumable()).toEqual([]);
  });

  it('its result is read by the other process after it ended', async () => {
    const store = memoryStore();
    const a = await supervise(store);
    const task = await a.callToolAsTask('summarize', { target: 'notes' }, { ttlMs: 60_000 });
    await server.complete(task.taskId!);
    const b = await supervise(store);
    const resumed = await b.tasks.resume(task.reference!);
    expect((await resumed.result()).content).toEqual([{ type: 'text', text: 'summarized notes' }]);
  });

  it('without a store a reference still travels by hand (a queue, a workflow state)', async () => {
    const a = await supervise(undefined);
    const task = await a.callToolAsTask('build', { target: 'cli' });
    const reference = JSON.parse(JSON.stringify(task.reference)) as typeof task.reference;
    const b = await supervise(undefined);
    expect(await b.tasks.resumable()).toEqual([]);
    await server.complete(task.taskId!);
    expect((await (await b.tasks.resume(reference!)).result()).content).toEqual([{ type: 'text', text: 'built cli' }]);
  });

  it('a reference of another server, or a damaged one, is a ConfigError before anything is sent', async () => {
    const b = await supervise(memoryStore());
    const task = await b.callToolAsTask('build', { target: 'x' });
    const gets = server.requests['tasks/get'] ?? 0;
    const reference = task.reference!;
    for (const [bad, field] of [
      [{ ...reference, server: 'another' }, 'ref.server'],
      [{ ...reference, era: 'modern' }, 'ref.era'],
      [{ ...reference, taskId: 7 }, 'ref.taskId'],
      [{ ...reference, operation: 'prompts/get' }, 'ref.operation'],
      [42, 'ref'],
    ] as const) {
      const error = await b.tasks.resume(bad as never).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).issues[0]?.path).toBe(field);
    }
    expect(server.requests['tasks/get'] ?? 0).toBe(gets);
    await server.complete(reference.taskId);
  });
});
