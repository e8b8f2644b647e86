/**
 * Call interceptors (`interceptors` on createSupervisor / connect / the drop-in transports), against
 * a real server built with the official SDK: they run around every tool call, first outermost;
 * they approve or deny (ToolCallDeniedError naming server and tool, the server never sees the
 * call), rewrite arguments, answer from a cache, and see each outcome. `handle.callTool`, the
 * catalog, an adapter and the SDK's own `Client` over `supervisedTransport` all go through them.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  connect,
  createSupervisor,
  ToolCallDeniedError,
  type CallToolResult,
  type ServerHandle,
  type Supervisor,
  type ToolCall,
  type ToolCallInterceptor,
} from '../../src/index.js';
import { aiSdkTools } from '../../src/adapters/ai-sdk/index.js';
import { supervisedTransport, SUPERVISOR_ERROR } from '../../src/adapters/sdk/index.js';
import { startToolServer, type ToolServer } from '../catalog/tool-server.js';

const FAST = { keepalive: false as const, restart: { backoff: { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 } } };

let server: ToolServer;
const toClose: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  server = await startToolServer([
    { name: 'echo', readOnly: true },
    { name: 'delete' },
    { name: 'fails', result: ({ text }) => ({ content: [{ type: 'text', text: `no ${text}` }], isError: true }) },
  ]);
});

afterEach(async () => {
  await Promise.all(toClose.splice(0).map((opened) => opened.close().catch(() => {})));
});

afterAll(async () => {
  await server?.close();
});

async function open(interceptors: ToolCallInterceptor[]): Promise<ServerHandle> {
  const handle = await connect({ url: server.url, ...FAST }, { name: 'tools', interceptors });
  toClose.push(handle);
  return handle;
}

function text(result: { content: Array<{ type: string; text?: string }> }): string | undefined {
  return result.content[0]?.text;
}

const calledWith = (prefix: string) => server.calls.filter((call) => call.startsWith(prefix));

describe('call interceptors around handle.callTool', () => {
  it('run in order, first outermost; each sees server, tool, arguments and options; next({ arguments }) rewrites', async () => {
    const seen: string[] = [];
    const signal = new AbortController().signal;
    const handle = await open([
      async (call, next) => {
        seen.push(`outer ${call.server}/${call.tool} ${JSON.stringify(call.arguments)} ${call.options?.timeoutMs}`);
        const result = await next({ arguments: { text: `${call.arguments.text as string}, rewritten` } });
        seen.push(`outer saw ${text(result)}`);
        return result;
      },
      (call, next) => {
        seen.push(`inner ${JSON.stringify(call.arguments)} ${call.options?.signal === signal}`);
        return next();
      },
    ]);
    const result = await handle.callTool('echo', { text: 'hi' }, { timeoutMs: 5000, signal });
    expect(text(result)).toBe('echo: hi, rewritten');
    expect(seen).toEqual([
      'outer tools/echo {"text":"hi"} 5000',
      'inner {"text":"hi, rewritten"} true',
      'outer saw echo: hi, rewritten',
    ]);
  });

  it('deny: a typed error naming server and tool; the server never sees the call', async () => {
    const handle = await open([
      (call, next) => {
        if (call.tool === 'delete') throw new ToolCallDeniedError(call, 'the user said no');
        return next();
      },
    ]);
    const before = calledWith('delete').length;
    const error = await handle.callTool('delete', { text: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolCallDeniedError);
    expect(error).toMatchObject({
      code: 'TOOL_CALL_DENIED',
      retryable: false,
      server: 'tools',
      toolName: 'delete',
      reason: 'the user said no',
      message: "[tools] call of tool 'delete' denied: the user said no",
    });
    expect(calledWith('delete').length).toBe(before);
    expect(text(await handle.callTool('echo', { text: 'allowed' }))).toBe('echo: allowed');
  });

  it('short-circuit: a result cache answers the second call; the server ran it once', async () => {
    const cache = new Map<string, CallToolResult>();
    const handle = await open([
      async (call, next) => {
        const key = `${call.server}/${call.tool}/${JSON.stringify(call.arguments)}`;
        const hit = cache.get(key);
        if (hit) return hit;
        const result = await next();
        cache.set(key, result);
        return result;
      },
    ]);
    const before = calledWith('echo(cached)').length;
    const first = await handle.callTool('echo', { text: 'cached' });
    const second = await handle.callTool('echo', { text: 'cached' });
    expect(second).toBe(first);
    expect(calledWith('echo(cached)').length).toBe(before + 1);
  });

  it('the outcome: a result (isError too), an error, with the time it took', async () => {
    const log: Array<{ tool: string; outcome: string; ms: number }> = [];
    const audit: ToolCallInterceptor = async (call, next) => {
      const started = performance.now();
      try {
        const result = await next();
        log.push({ tool: call.tool, outcome: result.isError ? 'isError' : 'ok', ms: performance.now() - started });
        return result;
      } catch (error) {
        log.push({ tool: call.tool, outcome: (error as Error).name, ms: performance.now() - started });
        throw error;
      }
    };
    const handle = await open([audit]);
    await handle.callTool('echo', { text: 'a' });
    await handle.callTool('fails', { text: 'b' });
    await expect(handle.callTool('echo', { text: 'c' }, { signal: AbortSignal.abort() })).rejects.toThrow();
    expect(log.map(({ tool, outcome }) => `${tool} ${outcome}`)).toEqual([
      'echo ok',
      'fails isError',
      'echo RequestAbortedError',
    ]);
    for (const entry of log) expect(entry.ms).toBeGreaterThanOrEqual(0);
  });

  it('an interceptor that throws anything else: the call rejects with it, unchanged', async () => {
    const boom = new Error('policy store unreachable');
    const handle = await open([
      () => {
        throw boom;
      },
    ]);
    await expect(handle.callTool('echo', { text: 'x' })).rejects.toBe(boom);
  });
});

describe('the catalog, the adapters and the drop-in transport go through them', () => {
  let sup: Supervisor | undefined;
  afterEach(async () => {
    await sup?.stop();
    sup = undefined;
  });

  it('catalog.call and an AI SDK tool: the interceptor sees the server and the tool by its own name', async () => {
    const calls: ToolCall[] = [];
    sup = createSupervisor({
      servers: { docs: { url: server.url, ...FAST } },
      catalog: { prefix: true },
      interceptors: [
        (call, next) => {
          calls.push(call);
          return call.tool === 'delete' ? Promise.reject(new ToolCallDeniedError(call)) : next();
        },
      ],
    });
    await sup.start();
    expect(text(await sup.catalog.call('docs__echo', { text: 'c' }))).toBe('echo: c');
    const tools = await aiSdkTools(sup);
    const execute = tools['docs__echo']!.execute! as (args: unknown, options: unknown) => Promise<CallToolResult>;
    expect(text(await execute({ text: 'ai' }, { toolCallId: '1', messages: [], abortSignal: undefined }))).toBe(
      'echo: ai',
    );
    const deny = tools['docs__delete']!.execute! as (args: unknown, options: unknown) => Promise<CallToolResult>;
    await expect(deny({ text: 'no' }, { toolCallId: '2', messages: [] })).rejects.toBeInstanceOf(ToolCallDeniedError);
    expect(calls.map((call) => `${call.server}/${call.tool}`)).toEqual(['docs/echo', 'docs/echo', 'docs/delete']);
  });

  it("the SDK's Client over supervisedTransport({ … }, { interceptors }): rewritten, cached, denied as a JSON-RPC error", async () => {
    const transport = supervisedTransport(
      { url: server.url, ...FAST },
      {
        interceptors: [
          (call, next) => {
            if (call.tool === 'delete') throw new ToolCallDeniedError(call, 'read-only agent');
            if (call.arguments.text === 'cached') return { content: [{ type: 'text', text: 'from the cache' }] };
            return next({ arguments: { text: `${call.arguments.text as string}!` } });
          },
        ],
      },
    );
    const client = new Client({ name: 'app', version: '1.0.0' });
    toClose.push(client);
    await client.connect(transport);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'sdk' } })).toEqual({
      content: [{ type: 'text', text: 'echo: sdk!' }],
    });
    expect(await client.callTool({ name: 'echo', arguments: { text: 'cached' } })).toEqual({
      content: [{ type: 'text', text: 'from the cache' }],
    });
    const denied = await client.callTool({ name: 'delete', arguments: {} }).catch((e: unknown) => e);
    expect(denied).toMatchObject({ code: SUPERVISOR_ERROR, data: { code: 'TOOL_CALL_DENIED' } });
    expect((denied as Error).message).toContain("call of tool 'delete' denied: read-only agent");
  });
});
