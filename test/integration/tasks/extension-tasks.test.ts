/**
 * 2026-07-28 tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) against a node:http
 * server written by the extension's spec (servers/tasks-extension-server.ts; the v2 server
 * package has no tasks). The server decides when to make a task; the client declares the
 * extension on every request, polls `tasks/get` at `pollIntervalMs` (hand-fired timers) and reads
 * the result inline.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createSupervisor,
  McpError,
  RequestAbortedError,
  TASKS_EXTENSION,
  TaskCancelledError,
  TaskNotFoundError,
  type ServerHandle,
  type Supervisor,
} from '../../../src/index.js';
import { startTasksExtensionServer, type TasksExtensionServer } from '../../../servers/tasks-extension-server.js';
import { ManualTimers } from '../../transports/helpers.js';

const POLL_MS = 2_500;
let server: TasksExtensionServer | undefined;
let supervisor: Supervisor | undefined;
afterEach(async () => {
  await supervisor?.stop().catch(() => {});
  await server?.close();
  supervisor = server = undefined;
});

async function open(): Promise<{ handle: ServerHandle; timers: ManualTimers; server: TasksExtensionServer }> {
  server = await startTasksExtensionServer({ pollIntervalMs: POLL_MS });
  const timers = new ManualTimers();
  supervisor = createSupervisor({
    servers: { jobs: { url: server.url, protocolVersion: 'modern', keepalive: false, requestTimeoutMs: 5_000 } },
    timers,
  });
  await supervisor.start();
  return { handle: supervisor.server('jobs'), timers, server };
}

function text(result: { content: Array<{ type: string; [key: string]: unknown }> }): unknown {
  return result.content[0]?.['text'];
}

async function createdTask(server: TasksExtensionServer, n = 0): Promise<string> {
  await expect.poll(() => server.created.length).toBeGreaterThan(n);
  return server.created[n]!;
}

describe('2026-07-28 tasks extension', () => {
  it('callTool: the server answers with a task, the client polls tasks/get at pollIntervalMs and returns the inline result', async () => {
    const { handle, timers, server } = await open();
    expect(handle.status()).toMatchObject({ era: 'modern', protocolVersion: '2026-07-28' });
    const call = handle.callTool('build', { target: 'app' });
    const taskId = await createdTask(server);
    const first = await timers.nth(0);
    expect(first.ms).toBe(POLL_MS);
    first.fire(); // still working
    const second = await timers.nth(1);
    expect(second.ms).toBe(POLL_MS);
    server.complete(taskId);
    second.fire();
    expect(text(await call)).toBe('built app');
    expect(server.count('tasks/get')).toBe(2);
    expect(server.count('tasks/result')).toBe(0); // no tasks/result in the extension
    // Every request declares the extension in its client capabilities.
    for (const request of server.seen)
      expect(request.params['_meta']).toMatchObject({
        'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
      });
    expect(server.seen.find((r) => r.method === 'tasks/get')?.params).toMatchObject({ taskId });
    // Streamable HTTP routing (SEP-2663): Mcp-Name carries the task id on every tasks/get.
    for (const poll of server.seen.filter((r) => r.method === 'tasks/get'))
      expect(poll.headers).toMatchObject({ 'mcp-method': 'tasks/get', 'mcp-name': taskId });
  });

  it('callToolAsTask: a handle with status(), result(); a call the server answers at once has no taskId', async () => {
    const { handle, timers, server } = await open();
    const task = await handle.callToolAsTask('build', { target: 'lib' });
    expect(task.taskId).toBe(server.created[0]);
    expect(task.lastStatus).toMatchObject({ status: 'working', ttlMs: 60_000, pollIntervalMs: POLL_MS });
    expect(await task.status()).toMatchObject({ taskId: task.taskId, status: 'working' });
    const result = task.result();
    server.complete(task.taskId!);
    (await timers.nth(0)).fire();
    expect(text(await result)).toBe('built lib');

    const quick = await handle.callToolAsTask('quick', { target: 'now' });
    expect(quick.taskId).toBeUndefined();
    expect(await quick.status()).toBeUndefined();
    expect(text(await quick.result())).toBe('quick now');
  });

  it('a failed task rejects with its JSON-RPC error; a cancelled one with TaskCancelledError', async () => {
    const { handle, timers, server } = await open();
    const failing = handle.callTool('flaky', { target: 'x' });
    server.fail(await createdTask(server, 0), -32603, 'API rate limit exceeded');
    (await timers.nth(0)).fire();
    const error = await failing.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ rpcCode: -32603, rpcMessage: 'API rate limit exceeded' });

    const task = await handle.callToolAsTask('build', { target: 'y' });
    await task.cancel(); // acknowledged; the fixture cancels at once
    expect(server.status(task.taskId!)).toBe('cancelled');
    const result = task.result();
    (await timers.nth(1)).fire();
    await expect(result).rejects.toBeInstanceOf(TaskCancelledError);
  });

  it('§55 aborting callTool sends tasks/cancel (never notifications/cancelled) and rejects with RequestAbortedError', async () => {
    const { handle, timers, server } = await open();
    const controller = new AbortController();
    const call = handle.callTool('build', { target: 'app' }, { signal: controller.signal });
    const taskId = await createdTask(server);
    await timers.nth(0);
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(RequestAbortedError);
    await expect.poll(() => server.status(taskId)).toBe('cancelled');
    expect(server.count('notifications/cancelled')).toBe(0);
  });

  it('a task outlives a restart (same taskId); a server that lost it answers TaskNotFoundError', async () => {
    const { handle, timers, server } = await open();
    const task = await handle.callToolAsTask('build', { target: 'app' });
    await server.restart({ keepTasks: true });
    await handle.reconnect();
    expect(await task.status()).toMatchObject({ taskId: task.taskId, status: 'working' });
    server.complete(task.taskId!);
    const result = task.result();
    (await timers.nth(0)).fire();
    expect(text(await result)).toBe('built app');
    expect(text(await handle.tasks.result(task.taskId!))).toBe('built app');

    const lost = await handle.callToolAsTask('build', { target: 'gone' });
    await server.restart({ keepTasks: false });
    await expect(lost.status()).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('input_required: status shows inputRequests, tasks.update answers them; tasks/list does not exist', async () => {
    const { handle, server } = await open();
    const task = await handle.callToolAsTask('build', { target: 'app' });
    const request = { method: 'elicitation/create', params: { mode: 'form', message: 'Name?' } };
    server.needInput(task.taskId!, { name: request });
    expect(await handle.tasks.get(task.taskId!)).toMatchObject({
      status: 'input_required',
      inputRequests: { name: request },
    });
    await handle.tasks.update(task.taskId!, { name: { action: 'accept', content: { name: 'Luca' } } });
    expect(server.seen.at(-1)).toMatchObject({
      method: 'tasks/update',
      params: { taskId: task.taskId, inputResponses: { name: { action: 'accept' } } },
      headers: { 'mcp-method': 'tasks/update', 'mcp-name': task.taskId },
    });
    expect(server.status(task.taskId!)).toBe('working');
    await expect(handle.tasks.list()).rejects.toMatchObject({ rpcCode: -32601 });
    expect(server.count('tasks/list')).toBe(0);
  });
});
