/**
 * Tasks passed through (issue #32, 2025-11-25 host side): a host's task-augmented `tools/call`
 * starts the task on the upstream server, and the host's `tasks/get`, `tasks/result`,
 * `tasks/cancel` and `tasks/list` are answered from it. Host: the official SDK v1 Client.
 * Upstream: a 2025-11-25 task server built with the SDK (servers/sdk-task-server.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  ListTasksResultSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { startSdkTaskServer, type SdkTaskServer } from '../../servers/sdk-task-server.js';
import { startGateway, text, v1Client, type RunningGateway } from './helpers.js';

let upstream: SdkTaskServer;
let gw: RunningGateway;
let client: Client;

beforeAll(async () => {
  upstream = await startSdkTaskServer({ stateful: false, pollIntervalMs: 20 });
  gw = await startGateway({
    servers: { jobs: { url: upstream.url, protocolVersion: 'legacy', keepalive: false, requestTimeoutMs: 5_000 } },
  });
  client = await v1Client(gw.http.url);
});

afterAll(async () => {
  await client?.close();
  await gw?.close();
  await upstream?.close();
});

function startTask(name: string, target: string) {
  return client.request(
    { method: 'tools/call', params: { name, arguments: { target }, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  );
}

describe('gateway tasks (2025-11-25 host)', () => {
  it('declares the tasks capability and lists the tools with their task support', async () => {
    expect(client.getServerCapabilities()?.tasks).toMatchObject({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const tools = (await client.listTools()).tools;
    expect(tools.find((tool) => tool.name === 'jobs__build')?.execution?.taskSupport).toBe('required');
  });

  it('a task-augmented call answers with the upstream task; get, list and result are served from it', async () => {
    const before = upstream.created.length;
    const { task } = await startTask('jobs__build', 'app');
    expect(upstream.created.length).toBe(before + 1);
    const upstreamId = upstream.created[before]!;
    expect(task).toMatchObject({ taskId: `jobs/${upstreamId}`, status: 'working', pollInterval: 20 });

    const got = await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema);
    expect(got).toMatchObject({ taskId: task.taskId, status: 'working' });
    const listed = await client.request({ method: 'tasks/list', params: {} }, ListTasksResultSchema);
    expect(listed.tasks.map((one) => one.taskId)).toContain(task.taskId);

    const result = client.request({ method: 'tasks/result', params: { taskId: task.taskId } }, CallToolResultSchema);
    await upstream.complete(upstreamId);
    expect(text(await result)).toBe('built app');
    const done = await client.request({ method: 'tasks/get', params: { taskId: task.taskId } }, GetTaskResultSchema);
    expect(done.status).toBe('completed');
  });

  it('tasks/cancel cancels the upstream task; an unknown task id is an error', async () => {
    const { task } = await startTask('jobs__summarize', 'notes');
    const cancelled = await client.request(
      { method: 'tasks/cancel', params: { taskId: task.taskId } },
      CancelTaskResultSchema,
    );
    expect(cancelled).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect(await upstream.status(task.taskId.slice('jobs/'.length))).toBe('cancelled');
    await expect(
      client.request({ method: 'tasks/get', params: { taskId: 'nowhere/1' } }, GetTaskResultSchema),
    ).rejects.toThrow(/Task not found: nowhere\/1/);
  });

  it('a call without a task still answers with the result (the gateway awaits the task)', async () => {
    const before = upstream.created.length;
    const call = client.callTool({ name: 'jobs__summarize', arguments: { target: 'plain' } });
    await expect.poll(() => upstream.created.length).toBe(before + 1);
    await upstream.complete(upstream.created[before]!);
    expect(text(await call)).toBe('summarized plain');
  });
});
