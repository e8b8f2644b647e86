/**
 * Tasks passed through to a 2026-07-28 host (issue #32, the `io.modelcontextprotocol/tasks`
 * extension): a host that declares the extension gets the upstream task (`resultType: 'task'`),
 * reads it with `tasks/get` (payload inline), answers its input requests with `tasks/update`,
 * cancels it, and hears its changes on a `subscriptions/listen` naming it. Upstream: a 2026-07-28
 * tasks server written by the extension's spec (servers/tasks-extension-server.ts) and a
 * 2025-11-25 SDK task server. Hosts: raw HTTP POSTs (no official client speaks the extension) and
 * this library's own client pinned to 2026-07-28, which does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/connect.js';
import { serveGatewayHttp, type HttpService } from '../../src/gateway/http.js';
import type { ServerHandle } from '../../src/handle/server-handle.js';
import { startSdkTaskServer, type SdkTaskServer } from '../../servers/sdk-task-server.js';
import { startTasksExtensionServer, type TasksExtensionServer } from '../../servers/tasks-extension-server.js';
import { startGateway, text, TOKEN, type RunningGateway } from './helpers.js';

const TASKS = 'io.modelcontextprotocol/tasks';
const MODERN = '2026-07-28';

let jobs: TasksExtensionServer;
let legacy: SdkTaskServer;
let spare: TasksExtensionServer;
let asks: SdkTaskServer;
let gw: RunningGateway;
let sdkPath: HttpService;

beforeAll(async () => {
  [jobs, legacy, spare, asks] = await Promise.all([
    startTasksExtensionServer({ pollIntervalMs: 20 }),
    startSdkTaskServer({ stateful: false, pollIntervalMs: 20 }),
    startTasksExtensionServer({ pollIntervalMs: 20 }),
    startSdkTaskServer({ stateful: true, pollIntervalMs: 20 }), // its `deploy` task asks for approval
  ]);
  const upstream = { keepalive: false, requestTimeoutMs: 2_000 } as const;
  gw = await startGateway({
    holdMs: 300,
    servers: {
      jobs: { url: jobs.url, protocolVersion: 'modern', ...upstream },
      old: { url: legacy.url, protocolVersion: 'legacy', ...upstream },
      spare: { url: spare.url, protocolVersion: 'modern', ...upstream, requestTimeoutMs: 300 },
      asks: { url: asks.url, protocolVersion: 'legacy', ...upstream },
    },
  });
  // The same gateway without its direct path: every request through the SDK's server.
  sdkPath = await serveGatewayHttp(gw.gateway, { token: TOKEN, directPath: false });
});

afterAll(async () => {
  await sdkPath?.close();
  await gw?.close();
  await Promise.all([jobs?.close(), legacy?.close(), spare?.close().catch(() => {}), asks?.close()]);
});

interface Reply {
  result?: Record<string, unknown> & { taskId?: string; status?: string; resultType?: string };
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** A 2026-07-28 request as a host sends it; `tasks`: the host declares the extension. */
async function rpc(method: string, params: Record<string, unknown>, tasks = true, url = gw.http.url): Promise<Reply> {
  const response = await fetch(url, {
    method: 'POST',
    headers: headers(method, params),
    body: body(method, params, tasks),
  });
  return (await response.json()) as Reply;
}

function headers(method: string, params: Record<string, unknown>): Record<string, string> {
  const name = (params['name'] ?? params['taskId']) as string | undefined;
  return {
    authorization: `Bearer ${TOKEN}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(name !== undefined && { 'mcp-name': name }),
  };
}

function body(method: string, params: Record<string, unknown>, tasks: boolean): string {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
    'io.modelcontextprotocol/clientInfo': { name: 'raw-host', version: '1' },
  };
  return JSON.stringify({ jsonrpc: '2.0', id: 'listen-1', method, params: { ...params, _meta } });
}

/** A 2026-07-28 notification as a host POSTs it (its envelope names the host). */
async function notify(
  method: string,
  params: Record<string, unknown>,
  clientInfo = { name: 'raw-host', version: '1' },
) {
  const _meta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': clientInfo };
  const response = await fetch(gw.http.url, {
    method: 'POST',
    headers: headers(method, {}),
    body: JSON.stringify({ jsonrpc: '2.0', method, params: { ...params, _meta } }),
  });
  await response.arrayBuffer();
  return response;
}

/** A `subscriptions/listen` stream: its messages as they come. */
async function listen(notifications: Record<string, unknown>, tasks = true) {
  const abort = new AbortController();
  const response = await fetch(gw.http.url, {
    method: 'POST',
    headers: headers('subscriptions/listen', {}),
    body: body('subscriptions/listen', { notifications }, tasks),
    signal: abort.signal,
  });
  const messages: Array<{ method?: string; params?: Record<string, unknown>; error?: { code: number } }> = [];
  const stream = { messages, ended: false, close: () => abort.abort() };
  if (!response.headers.get('content-type')?.includes('text/event-stream')) {
    messages.push((await response.json()) as never);
    return stream;
  }
  void (async () => {
    let buffered = '';
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        const events = buffered.split('\n\n');
        buffered = events.pop()!;
        for (const event of events)
          for (const line of event.split('\n'))
            if (line.startsWith('data: ')) messages.push(JSON.parse(line.slice(6)) as never);
      }
      stream.ended = true; // by the gateway
    } catch {
      // closed by the test
    }
  })();
  return stream;
}

async function created(server: { created: string[] }, before: number): Promise<string> {
  await expect.poll(() => server.created.length).toBe(before + 1);
  return server.created[before]!;
}

describe('gateway tasks (2026-07-28 host)', () => {
  it('declares the tasks extension on server/discover', async () => {
    const discovered = await rpc('server/discover', {});
    expect(discovered.result?.['capabilities']).toMatchObject({ extensions: { [TASKS]: {} } });
  });

  it('a host with the extension gets the upstream task, on both paths; tasks/get answers it with its result inline', async () => {
    for (const url of [gw.http.url, sdkPath.url]) {
      const before = jobs.created.length;
      const call = await rpc('tools/call', { name: 'jobs__build', arguments: { target: 'app' } }, true, url);
      const upstreamId = jobs.created[before]!;
      expect(call.result).toMatchObject({
        resultType: 'task',
        taskId: `jobs/${upstreamId}`,
        status: 'working',
        ttlMs: 60_000,
        pollIntervalMs: 20,
      });
      const taskId = call.result!.taskId!;
      expect((await rpc('tasks/get', { taskId }, true, url)).result).toMatchObject({ taskId, status: 'working' });
      jobs.complete(upstreamId);
      expect((await rpc('tasks/get', { taskId }, true, url)).result).toMatchObject({
        resultType: 'complete',
        taskId,
        status: 'completed',
        result: { content: [{ type: 'text', text: 'built app' }] },
      });
    }
  });

  it('a host without the extension gets the result itself (the gateway awaits the task)', async () => {
    const before = jobs.created.length;
    const call = rpc('tools/call', { name: 'jobs__build', arguments: { target: 'plain' } }, false);
    jobs.complete(await created(jobs, before));
    const answer = await call;
    expect(answer.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'built plain' }] });
  });

  it('a 2025-11-25 upstream task reaches the host in the extension shape, its outcome inline once it ends', async () => {
    const before = legacy.created.length;
    const call = await rpc('tools/call', { name: 'old__build', arguments: { target: 'lib' } });
    const upstreamId = legacy.created[before]!;
    expect(call.result).toMatchObject({ resultType: 'task', taskId: `old/${upstreamId}`, status: 'working' });
    expect(call.result).toHaveProperty('ttlMs'); // the extension's names, not 2025-11-25's `ttl`, `pollInterval`
    expect(call.result).not.toHaveProperty('ttl');
    await legacy.complete(upstreamId);
    const done = await rpc('tasks/get', { taskId: `old/${upstreamId}` });
    expect(done.result).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'built lib' }] },
    });
  });

  it('a 2025-11-25 upstream task waiting for input: the host reads its question on tasks/get, answers it with tasks/update', async () => {
    const call = await rpc('tools/call', { name: 'asks__deploy', arguments: { target: 'prod' } });
    const taskId = call.result!.taskId!;
    expect(taskId).toMatch(/^asks\//);
    let task: Reply['result'];
    await expect
      .poll(async () => (task = (await rpc('tasks/get', { taskId })).result)?.status, { timeout: 5_000 })
      .toBe('input_required');
    expect(task).toMatchObject({
      taskId,
      inputRequests: {
        'input-1': {
          method: 'elicitation/create',
          params: { mode: 'form', message: 'Deploy prod?', requestedSchema: { type: 'object' } },
        },
      },
    });
    // The upstream's own task id stays upstream.
    expect(JSON.stringify(task)).not.toContain('related-task');
    const answer = { 'input-1': { action: 'accept', content: { ok: true } } };
    expect(await rpc('tasks/update', { taskId, inputResponses: answer })).toMatchObject({ result: {} });
    await expect
      .poll(async () => (task = (await rpc('tasks/get', { taskId })).result)?.status, { timeout: 5_000 })
      .toBe('completed');
    expect(task).toMatchObject({ result: { content: [{ type: 'text', text: 'deploy prod: accept' }] } });
  });

  it('tasks/cancel is passed on and acknowledged; tasks/list and tasks/result are not part of the extension', async () => {
    const before = jobs.created.length;
    const { result } = await rpc('tools/call', { name: 'jobs__build', arguments: { target: 'gone' } });
    expect(await rpc('tasks/cancel', { taskId: result!.taskId! })).toMatchObject({
      result: { resultType: 'complete' },
    });
    expect(jobs.status(jobs.created[before]!)).toBe('cancelled');
    expect((await rpc('tasks/list', {})).error?.code).toBe(-32601);
    expect((await rpc('tasks/result', { taskId: result!.taskId! })).error?.code).toBe(-32601);
    expect((await rpc('tasks/get', { taskId: 'nowhere/1' })).error).toMatchObject({ code: -32602 });
  });

  it('a task’s input requests reach the host, and its answers the server (this library as the 2026-07-28 host)', async () => {
    const asked: unknown[] = [];
    const host: ServerHandle = await connect(
      { url: gw.http.url, protocolVersion: 'modern', keepalive: false, headers: { authorization: `Bearer ${TOKEN}` } },
      {
        handlers: {
          elicitation: (params) => {
            asked.push(params.message);
            return { action: 'accept', content: { name: 'Luca' } };
          },
        },
      },
    );
    try {
      const task = await host.callToolAsTask('jobs__greet', { target: 'x' });
      expect(task.taskId).toMatch(/^jobs\//);
      const result = await task.result();
      expect(asked).toEqual(['Please enter your name.']);
      expect(JSON.parse(text(result))).toEqual({
        name: { action: 'accept', content: { name: 'Luca' } },
      });
      const update = jobs.seen.filter((request) => request.method === 'tasks/update').at(-1);
      expect(update?.params).toMatchObject({
        taskId: task.taskId!.slice('jobs/'.length),
        inputResponses: { name: {} },
      });
    } finally {
      await host.close();
    }
  });

  it('a listen naming tasks gets their status notifications, and only for the tasks the gateway can read', async () => {
    const before = jobs.created.length;
    const { result } = await rpc('tools/call', { name: 'jobs__build', arguments: { target: 'heard' } });
    const taskId = result!.taskId!;
    const upstreamId = jobs.created[before]!;
    const stream = await listen({ taskIds: [taskId, 'nowhere/1'], toolsListChanged: true });
    try {
      await expect.poll(() => stream.messages.length).toBeGreaterThanOrEqual(2);
      expect(stream.messages[0]).toMatchObject({
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications: { taskIds: [taskId], toolsListChanged: true } },
      });
      expect(stream.messages[1]).toMatchObject({
        method: 'notifications/tasks',
        params: { taskId, status: 'working' },
      });
      const question = { q1: { method: 'elicitation/create', params: { message: 'Which?', requestedSchema: {} } } };
      jobs.needInput(upstreamId, question);
      await expect.poll(() => stream.messages.at(-1)?.params?.['status']).toBe('input_required');
      expect(stream.messages.at(-1)?.params).toMatchObject({ taskId, inputRequests: question });
      jobs.complete(upstreamId);
      await expect.poll(() => stream.messages.at(-1)?.params?.['status']).toBe('completed');
      expect(stream.messages.at(-1)?.params).toMatchObject({
        result: { content: [{ text: 'built heard' }] },
        _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' },
      });
    } finally {
      stream.close();
    }
  });

  it('a listen reports a 2025-11-25 upstream task too, with its outcome inline', async () => {
    const before = legacy.created.length;
    const { result } = await rpc('tools/call', { name: 'old__build', arguments: { target: 'told' } });
    const stream = await listen({ taskIds: [result!.taskId!] });
    try {
      await expect.poll(() => stream.messages.length).toBe(2);
      await legacy.complete(legacy.created[before]!);
      await expect.poll(() => stream.messages.at(-1)?.params?.['status']).toBe('completed');
      expect(stream.messages.at(-1)?.params).toMatchObject({ result: { content: [{ text: 'built told' }] } });
    } finally {
      stream.close();
    }
  });

  it('a listen naming tasks ends on notifications/cancelled for its request id: no more reads, nothing more written', async () => {
    const before = jobs.created.length;
    const { result } = await rpc('tools/call', { name: 'jobs__build', arguments: { target: 'dropped' } });
    const taskId = result!.taskId!;
    const upstreamId = jobs.created[before]!;
    const stream = await listen({ taskIds: [taskId] });
    try {
      await expect.poll(() => stream.messages.length).toBe(2);
      const reads = () =>
        jobs.seen.filter((r) => r.method === 'tasks/get' && r.params?.['taskId'] === upstreamId).length;
      await expect.poll(reads).toBeGreaterThan(1); // the listen reads the task upstream at its poll interval
      // Another host's cancellation of its own request with the same id does not end this listen.
      const other = await notify(
        'notifications/cancelled',
        { requestId: 'listen-1' },
        { name: 'other-host', version: '1' },
      );
      expect(other.status).toBe(202);
      expect(stream.ended).toBe(false);
      const cancelled = await notify('notifications/cancelled', { requestId: 'listen-1', reason: 'done' });
      expect(cancelled.status).toBe(202);
      await expect.poll(() => stream.ended).toBe(true);
      const readsAtEnd = reads();
      jobs.complete(upstreamId);
      expect((await rpc('tasks/get', { taskId })).result).toMatchObject({ status: 'completed' });
      expect(reads()).toBeLessThanOrEqual(readsAtEnd + 2); // our own tasks/get, and at most one read already under way
      expect(stream.messages).toHaveLength(2); // no answer, no notification after the cancellation
    } finally {
      stream.close();
    }
  });

  it('a listen naming tasks without the extension declared is refused (-32021)', async () => {
    const stream = await listen({ taskIds: ['jobs/1'] }, false);
    expect(stream.messages[0]).toMatchObject({
      error: { code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } },
    });
  });

  it('a task the upstream lost in a restart fails by name: tasks/get -32602, the listen a failed task', async () => {
    const before = jobs.created.length;
    const { result } = await rpc('tools/call', { name: 'jobs__build', arguments: { target: 'lost' } });
    const taskId = result!.taskId!;
    const stream = await listen({ taskIds: [taskId] });
    try {
      await expect.poll(() => stream.messages.length).toBe(2);
      expect(jobs.created.length).toBe(before + 1);
      await jobs.restart({ keepTasks: false });
      await expect.poll(() => stream.messages.at(-1)?.params?.['status']).toBe('failed');
      expect(stream.messages.at(-1)?.params).toMatchObject({
        taskId,
        error: { code: -32602, message: expect.stringContaining(`server 'jobs' no longer knows task ${taskId}`) },
      });
      expect((await rpc('tasks/get', { taskId })).error).toMatchObject({
        code: -32602,
        data: { server: 'jobs', reason: 'task_lost' },
      });
    } finally {
      stream.close();
    }
  });

  it('a task whose server is down: tasks/get fails naming the server, within the hold time', async () => {
    const { result } = await rpc('tools/call', { name: 'spare__build', arguments: { target: 'x' } });
    expect(result?.taskId).toMatch(/^spare\//);
    await spare.close();
    const answer = await rpc('tasks/get', { taskId: result!.taskId! });
    expect(answer.error?.message).toMatch(/spare/);
    expect(answer.error?.code).toBe(-32603);
  });
});
