/**
 * 2025-11-25 experimental tasks against a server built with the official SDK (v1) the way its
 * example does (servers/sdk-task-server.ts). The poll waits run on hand-fired timers: a test sees
 * the delay the client asked for and decides when it passes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  ConnectionClosedError,
  createSupervisor,
  RequestAbortedError,
  TaskNotFoundError,
  type ServerHandle,
  type Supervisor,
} from '../../../src/index.js';
import { startSdkTaskServer, type SdkTaskServer } from '../../../servers/sdk-task-server.js';
import { startSdkServer } from '../../../servers/sdk-servers.js';
import { ManualTimers } from '../../transports/helpers.js';

const POLL_MS = 5_000;
let server: SdkTaskServer | undefined;
let supervisor: Supervisor | undefined;
afterEach(async () => {
  await supervisor?.stop().catch(() => {});
  await server?.close();
  supervisor = server = undefined;
});

async function open(
  stateful = false,
  pollIntervalMs = POLL_MS,
): Promise<{ handle: ServerHandle; timers: ManualTimers; server: SdkTaskServer }> {
  server = await startSdkTaskServer({ stateful, pollIntervalMs });
  const timers = new ManualTimers();
  supervisor = createSupervisor({
    servers: { jobs: { url: server.url, protocolVersion: 'legacy', keepalive: false, requestTimeoutMs: 5_000 } },
    timers,
  });
  await supervisor.start();
  return { handle: supervisor.server('jobs'), timers, server };
}

/** The n-th wait the client scheduled. */
function pollWait(timers: ManualTimers, n = 0) {
  return timers.nth(n);
}

function text(result: { content: Array<{ type: string; [key: string]: unknown }> }): unknown {
  return result.content[0]?.['text'];
}

async function createdTask(server: SdkTaskServer, n = 0): Promise<string> {
  await expect.poll(() => server.created.length).toBeGreaterThan(n);
  return server.created[n]!;
}

describe('2025-11-25 tasks (SDK v1 server)', () => {
  it("a tool with taskSupport 'required' works through callTool: task created, polled at the server's interval, result", async () => {
    const { handle, timers, server } = await open();
    const call = handle.callTool('build', { target: 'app' });
    const taskId = await createdTask(server);
    const wait = await pollWait(timers);
    expect(wait.ms).toBe(POLL_MS); // the server's pollInterval, honoured
    await server.complete(taskId);
    wait.fire();
    expect(text(await call)).toBe('built app');
    // The tool's task support was learned from one tools/list; the plain call was never sent.
    expect(server.requests).toMatchObject({ 'tools/list': 1, 'tools/call': 1, 'tasks/get': 1, 'tasks/result': 1 });
  });

  it('concurrent calls on a new session share one tools listing; each required call is its own task', async () => {
    const { handle, timers, server } = await open();
    const calls = [handle.callTool('build', { target: 'a' }), handle.callTool('build', { target: 'b' })];
    await createdTask(server, 1);
    expect(server.requests['tools/list']).toBe(1);
    for (const taskId of server.created) await server.complete(taskId);
    (await timers.nth(0)).fire();
    (await timers.nth(1)).fire();
    expect((await Promise.all(calls)).map(text).sort()).toEqual(['built a', 'built b']);
  });

  it("an 'optional' tool is a plain call unless asked: no task polling by the client", async () => {
    // The SDK runs it as a task on its side and polls it itself, at its interval (short here).
    const { handle, server } = await open(false, 20);
    const call = handle.callTool('summarize', { target: 'notes' });
    await server.complete(await createdTask(server));
    expect(text(await call)).toBe('summarized notes');
    expect(server.requests['tasks/get']).toBeUndefined();
  });

  it("an 'optional' tool as a task: callToolAsTask, status(), tasks.list(), result()", async () => {
    const { handle, timers, server } = await open();
    const task = await handle.callToolAsTask('summarize', { target: 'notes' }, { ttlMs: 60_000 });
    expect(task.taskId).toBe(server.created[0]);
    expect(await task.status()).toMatchObject({
      taskId: task.taskId,
      status: 'working',
      ttlMs: 60_000,
      pollIntervalMs: POLL_MS,
    });
    expect((await handle.tasks.list()).tasks.map((t) => t.taskId)).toContain(task.taskId);
    const result = task.result();
    await server.complete(task.taskId!);
    (await pollWait(timers)).fire();
    expect(text(await result)).toBe('summarized notes');
    expect(await handle.tasks.get(task.taskId!)).toMatchObject({ status: 'completed' });
  });

  it('§55 aborting a callTool of a required tool cancels the task (tasks/cancel)', async () => {
    const { handle, timers, server } = await open();
    const controller = new AbortController();
    const call = handle.callTool('build', { target: 'app' }, { signal: controller.signal });
    const taskId = await createdTask(server);
    await pollWait(timers); // polling
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(RequestAbortedError);
    await expect.poll(() => server.status(taskId)).toBe('cancelled');
    expect(server.requests['tasks/cancel']).toBe(1);
  });

  it('closing the server ends a wait at once: the call fails with ConnectionClosedError, no timer fired', async () => {
    const { handle, timers, server } = await open();
    const call = handle.callTool('build', { target: 'app' });
    await createdTask(server);
    await pollWait(timers);
    await handle.close();
    await expect(call).rejects.toBeInstanceOf(ConnectionClosedError);
    expect(timers.scheduled.every((entry) => !entry.fired)).toBe(true);
  });

  it('notifications/tasks/status ends the wait at once (no poll timer fired)', async () => {
    const { handle, timers, server } = await open(true);
    const call = handle.callTool('build', { target: 'lib' });
    const taskId = await createdTask(server);
    await pollWait(timers);
    await server.complete(taskId); // the SDK sends notifications/tasks/status on the session's GET stream
    expect(text(await call)).toBe('built lib');
    expect(timers.scheduled.every((entry) => !entry.fired)).toBe(true);
    expect(server.requests['tasks/get']).toBeUndefined();
  });

  it('input_required: tasks/result carries the elicitation to the handler, then the result', async () => {
    // The SDK's tasks/result re-checks the task every pollInterval on its side: short here.
    server = await startSdkTaskServer({ stateful: true, pollIntervalMs: 20 });
    const asked: unknown[] = [];
    const timers = new ManualTimers();
    supervisor = createSupervisor({
      servers: { jobs: { url: server.url, protocolVersion: 'legacy', keepalive: false, requestTimeoutMs: 5_000 } },
      timers,
      handlers: {
        elicitation: (params) => {
          asked.push(params);
          return { action: 'accept', content: { ok: true } };
        },
      },
    });
    await supervisor.start();
    const call = supervisor.server('jobs').callTool('deploy', { target: 'prod' });
    // The task may be input_required at its creation already (then no wait), or turn so while the
    // client waits, its notice perhaps sent before the client listens: then the poll finds it.
    void timers.nth(0).then(
      (wait) => wait.fire(),
      () => undefined,
    );
    expect(text(await call)).toBe('deploy prod: accept');
    expect(asked).toMatchObject([{ message: 'Deploy prod?' }]);
    expect(server.requests['tasks/result']).toBe(1);
  });

  it('a task outlives a restart of the server and a new connection: polling goes on with the same taskId', async () => {
    const { handle, timers, server } = await open();
    const task = await handle.callToolAsTask('build', { target: 'app' });
    await server.restart({ keepTasks: true });
    await handle.reconnect();
    expect(await task.status()).toMatchObject({ taskId: task.taskId, status: 'working' });
    await server.complete(task.taskId!);
    const result = task.result();
    (await pollWait(timers)).fire();
    expect(text(await result)).toBe('built app');
    // Another handle on the same task, by id, as a client restarted with a persisted id would make.
    expect(text(await handle.tasks.result(task.taskId!))).toBe('built app');
  });

  it('a server that lost the task in a restart: TaskNotFoundError naming the task', async () => {
    const { handle, server } = await open();
    const task = await handle.callToolAsTask('build', { target: 'app' });
    await server.restart({ keepTasks: false });
    const error = await task.status().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TaskNotFoundError);
    expect(error).toMatchObject({ taskId: task.taskId, rpcCode: -32602 });
    expect(String((error as Error).message)).toContain(task.taskId);
  });

  it('callToolAsTask on a tool that forbids tasks is a ConfigError naming execution.taskSupport', async () => {
    const { handle } = await open();
    await expect(handle.callToolAsTask('echo', { text: 'x' })).rejects.toBeInstanceOf(ConfigError);
    await expect(handle.callToolAsTask('echo', { text: 'x' })).rejects.toThrow(/execution.taskSupport/);
    expect(text(await handle.callTool('echo', { text: 'plain' }))).toBe('plain');
  });

  it('a server without task support: callToolAsTask is a ConfigError naming the capability, callTool a plain call', async () => {
    const plain = await startSdkServer({ stateful: false });
    try {
      supervisor = createSupervisor({
        servers: { plain: { url: plain.url, protocolVersion: 'legacy', keepalive: false } },
      });
      await supervisor.start();
      const handle = supervisor.server('plain');
      await expect(handle.callToolAsTask('echo', { text: 'x' })).rejects.toThrow(/tasks\.requests\.tools\.call/);
      await expect(handle.callToolAsTask('echo', { text: 'x' })).rejects.toBeInstanceOf(ConfigError);
      expect(text(await handle.callTool('echo', { text: 'plain' }))).toBe('plain');
    } finally {
      await supervisor?.stop();
      await plain.close();
    }
  });
});
