/**
 * `handle.callToolAsTask` through the call interceptors (src/tools/intercepted-task.ts), against
 * the SDK's task server (2025-11-25): a denial creates no task, a rewrite creates the task with
 * the new arguments, a short-circuit is a handle without a task, and the task's outcome goes back
 * out through the interceptors when the handle's `result()` gets it. Poll waits on hand-fired timers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createSupervisor,
  ToolCallDeniedError,
  type CallToolResult,
  type Supervisor,
  type ToolCall,
  type ToolCallInterceptor,
} from '../../src/index.js';
import { startSdkTaskServer, type SdkTaskServer } from '../../servers/sdk-task-server.js';
import { ManualTimers } from '../transports/helpers.js';

let server: SdkTaskServer;
let supervisor: Supervisor | undefined;

beforeAll(async () => {
  server = await startSdkTaskServer({ stateful: false, pollIntervalMs: 5_000 });
});
afterEach(async () => {
  await supervisor?.stop().catch(() => {});
  supervisor = undefined;
});
afterAll(async () => {
  await server?.close();
});

async function open(interceptors: ToolCallInterceptor[]) {
  const timers = new ManualTimers();
  supervisor = createSupervisor({
    servers: { jobs: { url: server.url, protocolVersion: 'legacy', keepalive: false, requestTimeoutMs: 5_000 } },
    timers,
    interceptors,
  });
  await supervisor.start();
  return { handle: supervisor.server('jobs'), timers };
}

const text = (result: CallToolResult): unknown => result.content[0]?.['text'];
const calls = () => server.requests['tools/call'] ?? 0;

describe('callToolAsTask through the call interceptors', () => {
  it('the interceptors see the call, rewrite its arguments; the outcome comes back through them at result()', async () => {
    const seen: Array<ToolCall | string> = [];
    const { handle, timers } = await open([
      async (call, next) => {
        seen.push(call);
        const result = await next({ arguments: { target: `${String(call.arguments['target'])}-v2` } });
        seen.push(`outcome ${String(text(result))}`);
        return { ...result, content: [...result.content, { type: 'text', text: 'checked' }] };
      },
    ]);
    const task = await handle.callToolAsTask('summarize', { target: 'notes' }, { ttlMs: 60_000 });
    expect(task.taskId).toBe(server.created.at(-1));
    expect(seen).toEqual([
      { server: 'jobs', tool: 'summarize', arguments: { target: 'notes' }, options: { ttlMs: 60_000 } },
    ]);
    expect(await task.status()).toMatchObject({ status: 'working', ttlMs: 60_000 }); // the options reached the server
    const result = task.result();
    await server.complete(task.taskId!);
    (await timers.nth(0)).fire();
    const outcome = await result;
    // The server ran the rewritten arguments; the interceptor saw the outcome and added to it.
    expect(outcome.content.map((part) => part['text'])).toEqual(['summarized notes-v2', 'checked']);
    expect(seen[1]).toBe('outcome summarized notes-v2');
  });

  it('a denial rejects callToolAsTask with ToolCallDeniedError and creates no task', async () => {
    const { handle } = await open([
      (call, next) => (call.tool === 'build' ? Promise.reject(new ToolCallDeniedError(call, 'not today')) : next()),
    ]);
    const before = { created: server.created.length, calls: calls() };
    const error = await handle.callToolAsTask('build', { target: 'app' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolCallDeniedError);
    expect(error).toMatchObject({ code: 'TOOL_CALL_DENIED', server: 'jobs', toolName: 'build' });
    expect(String((error as Error).message)).toContain('not today');
    expect({ created: server.created.length, calls: calls() }).toEqual(before);
  });

  it('a short-circuit is a handle without a task whose result() is the interceptor’s result', async () => {
    const cached: CallToolResult = { content: [{ type: 'text', text: 'from the cache' }] };
    const { handle } = await open([() => cached]);
    const before = calls();
    const task = await handle.callToolAsTask('build', { target: 'app' });
    expect(task.taskId).toBeUndefined();
    expect(task.reference).toBeUndefined();
    expect(await task.status()).toBeUndefined();
    expect(text(await task.result())).toBe('from the cache');
    expect(calls()).toBe(before); // the server never saw it
  });

  it("a task's failure to be created reaches the interceptors as next()'s error", async () => {
    const errors: unknown[] = [];
    const { handle } = await open([
      async (_call, next) => {
        try {
          return await next();
        } catch (error) {
          errors.push(error);
          throw error;
        }
      },
    ]);
    // 'echo' forbids tasks: the ConfigError passes through the interceptor on its way out.
    await expect(handle.callToolAsTask('echo', { text: 'x' })).rejects.toThrow(/execution.taskSupport/);
    expect(errors).toHaveLength(1);
  });
});
