/**
 * Server-to-client requests and notifications (issue #5): handlers, capabilities advertised only
 * for the handlers given, SEP-1034 defaults, -32601 for the unknown, errors from a throwing
 * handler, cancellation by the server, progress, log messages and list_changed events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  connect,
  createSupervisor,
  RequestTimeoutError,
  type ClientHandlers,
  type Progress,
  type ServerHandle,
} from '../../src/index.js';
import { startSdkServer, type SdkServer } from '../../servers/sdk-servers.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { rpcPosts } from './helpers.js';

let fixture: HttpFixture | undefined;
let handle: ServerHandle | undefined;

afterEach(async () => {
  await handle?.close().catch(() => {});
  await fixture?.close();
  handle = undefined;
  fixture = undefined;
});

/** Resolves with the client's POSTed answer to the server request `id`. */
function answerTo(f: HttpFixture, id: string): Promise<Record<string, any>> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 10_000;
    const look = () => {
      const found = f.requests.find((r) => r.method === 'POST' && r.body?.id === id && r.body?.method === undefined);
      if (found) resolve(found.body);
      else if (Date.now() > deadline) reject(new Error(`no answer to ${id}`));
      else setImmediate(look);
    };
    look();
  });
}

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', default: 'John Doe' },
    age: { type: 'integer', default: 30 },
    score: { type: 'number', default: 95.5 },
    status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', default: true },
  },
};

async function open(handlers: ClientHandlers, applyDefaults = false): Promise<HttpFixture> {
  fixture = await startHttpFixture();
  handle = await connect({ url: fixture.url }, { name: 'fx', handlers, elicitation: { applyDefaults } });
  return fixture;
}

describe('server-to-client requests', () => {
  it('advertises only the capabilities of the handlers given', async () => {
    const f = await open({ elicitation: () => ({ action: 'decline' }), roots: () => ({ roots: [] }) });
    const init = rpcPosts(f, 'initialize')[0]!.body.params;
    expect(Object.keys(init.capabilities).sort()).toEqual(['elicitation', 'roots']);
    expect(init.capabilities.roots).toEqual({ listChanged: true });
  });

  it('routes elicitation/create from the GET stream to the handler and fills schema defaults (SEP-1034)', async () => {
    let seen: Record<string, unknown> | undefined;
    const f = await open(
      { elicitation: (params) => ((seen = params), { action: 'accept', content: { name: 'Ada' } }) },
      true,
    );
    expect(
      f.push({
        jsonrpc: '2.0',
        id: 'e1',
        method: 'elicitation/create',
        params: { message: 'Who?', requestedSchema: SCHEMA },
      }),
    ).toBe(true);
    const answer = await answerTo(f, 'e1');
    expect(seen?.message).toBe('Who?');
    expect(answer.result).toEqual({
      action: 'accept',
      content: { name: 'Ada', age: 30, score: 95.5, status: 'active', verified: true },
    });
  });

  it('without applyDefaults the handler result is sent as it is', async () => {
    const f = await open({ elicitation: () => ({ action: 'accept', content: { name: 'Ada' } }) });
    f.push({
      jsonrpc: '2.0',
      id: 'e2',
      method: 'elicitation/create',
      params: { message: 'Who?', requestedSchema: SCHEMA },
    });
    expect((await answerTo(f, 'e2')).result).toEqual({ action: 'accept', content: { name: 'Ada' } });
  });

  it('elicitation/create with mode url goes to urlElicitation; a form-only client answers it -32602', async () => {
    const url = { mode: 'url', message: 'Sign in', url: 'https://example.com/a', elicitationId: 'x1' };
    const f = await open({ elicitation: () => ({ action: 'decline' }), urlElicitation: () => ({ action: 'accept' }) });
    expect(rpcPosts(f, 'initialize')[0]!.body.params.capabilities.elicitation).toEqual({ form: {}, url: {} });
    f.push({ jsonrpc: '2.0', id: 'u1', method: 'elicitation/create', params: url });
    f.push({
      jsonrpc: '2.0',
      id: 'f1',
      method: 'elicitation/create',
      params: { message: 'Who?', requestedSchema: SCHEMA },
    });
    expect((await answerTo(f, 'u1')).result).toEqual({ action: 'accept' });
    expect((await answerTo(f, 'f1')).result).toEqual({ action: 'decline' });
    await handle?.close();
    await f.close();
    const formOnly = await open({ elicitation: () => ({ action: 'accept', content: {} }) });
    formOnly.push({ jsonrpc: '2.0', id: 'u2', method: 'elicitation/create', params: url });
    expect((await answerTo(formOnly, 'u2')).error).toEqual({
      code: -32602,
      message: "elicitation mode 'url' is not supported by this client",
    });
  });

  it('answers roots/list and sampling through their handlers', async () => {
    const f = await open({
      roots: () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }),
      sampling: (params) => ({
        role: 'assistant',
        content: { type: 'text', text: `echo ${String((params.messages as unknown[]).length)}` },
        model: 'test',
      }),
    });
    f.push({ jsonrpc: '2.0', id: 'r1', method: 'roots/list' });
    f.push({
      jsonrpc: '2.0',
      id: 's1',
      method: 'sampling/createMessage',
      params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 },
    });
    expect((await answerTo(f, 'r1')).result).toEqual({ roots: [{ uri: 'file:///work', name: 'work' }] });
    expect((await answerTo(f, 's1')).result).toMatchObject({ role: 'assistant', content: { text: 'echo 1' } });
  });

  it('answers ping, -32601 for methods without a handler, and -32603 with the message when a handler throws', async () => {
    const f = await open({
      roots: () => {
        throw new Error('disk on fire');
      },
    });
    f.push({ jsonrpc: '2.0', id: 'p1', method: 'ping' });
    f.push({ jsonrpc: '2.0', id: 'u1', method: 'sampling/createMessage', params: {} });
    f.push({ jsonrpc: '2.0', id: 't1', method: 'roots/list' });
    expect((await answerTo(f, 'p1')).result).toEqual({});
    expect((await answerTo(f, 'u1')).error).toMatchObject({
      code: -32601,
      message: 'Method not found: sampling/createMessage',
    });
    expect((await answerTo(f, 't1')).error).toEqual({ code: -32603, message: 'disk on fire' });
  });

  it("aborts the handler's signal on notifications/cancelled and sends no answer", async () => {
    let aborted!: () => void;
    const abortedNow = new Promise<void>((resolve) => (aborted = resolve));
    let started!: () => void;
    const startedNow = new Promise<void>((resolve) => (started = resolve));
    const f = await open({
      elicitation: (_params, { signal }) =>
        new Promise((resolve) => {
          started();
          signal.addEventListener('abort', () => {
            aborted();
            resolve({ action: 'cancel' });
          });
        }),
    });
    f.push({
      jsonrpc: '2.0',
      id: 'c1',
      method: 'elicitation/create',
      params: { message: 'slow', requestedSchema: SCHEMA },
    });
    await startedNow;
    f.push({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c1', reason: 'user left' } });
    await abortedNow;
    await handle!.callTool('echo', { text: 'after' }); // a round trip later, still no answer to c1
    expect(f.requests.filter((r) => r.body?.id === 'c1')).toHaveLength(0);
  });
});

describe('notifications', () => {
  it('delivers log messages and list_changed as events on the handle and the supervisor', async () => {
    fixture = await startHttpFixture();
    const sup = createSupervisor({ servers: { fx: { url: fixture.url } } });
    await sup.start();
    const logs: unknown[] = [];
    const changed: unknown[] = [];
    const all: string[] = [];
    sup.server('fx').on('log', (log) => logs.push(log));
    sup.on('listChanged', (event) => changed.push(event));
    sup.on('notification', ({ server, notification }) => all.push(`${server}:${notification.method}`));
    fixture.push({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'warning', logger: 'db', data: 'slow query' },
    });
    fixture.push({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
    await sup.server('fx').callTool('echo', { text: 'sync' });
    await new Promise<void>((resolve) =>
      all.length >= 2 ? resolve() : sup.on('notification', () => all.length >= 2 && resolve()),
    );
    expect(logs).toEqual([{ level: 'warning', logger: 'db', data: 'slow query' }]);
    expect(changed).toEqual([{ server: 'fx', list: 'tools' }]);
    expect(all).toEqual(['fx:notifications/message', 'fx:notifications/tools/list_changed']);
    await sup.stop();
  });
});

describe('progress', () => {
  let sdk: SdkServer | undefined;
  afterEach(async () => {
    await sdk?.close();
    sdk = undefined;
  });

  it('delivers progress to the request that asked for it, with a progressToken in _meta', async () => {
    sdk = await startSdkServer({ stateful: true });
    handle = await connect({ url: sdk.url }, { name: 'sdk' });
    const seen: Progress[] = [];
    const result = await handle.callTool('countdown', { steps: 3, everyMs: 5 }, { onprogress: (p) => seen.push(p) });
    expect(result.content[0]?.text).toBe('done after 3');
    expect(seen.map((p) => [p.progress, p.total, p.message])).toEqual([
      [1, 3, 'step 1'],
      [2, 3, 'step 2'],
      [3, 3, 'step 3'],
    ]);
    expect(new Set(seen.map((p) => p.progressToken)).size).toBe(1);
  });

  it('resetTimeoutOnProgress keeps a long call alive while progress arrives; without it the call times out', async () => {
    sdk = await startSdkServer({ stateful: true });
    handle = await connect({ url: sdk.url }, { name: 'sdk' });
    const args = { steps: 6, everyMs: 40 };
    await expect(handle.callTool('countdown', args, { timeoutMs: 120, onprogress: () => {} })).rejects.toBeInstanceOf(
      RequestTimeoutError,
    );
    const result = await handle.callTool('countdown', args, {
      timeoutMs: 120,
      onprogress: () => {},
      resetTimeoutOnProgress: true,
    });
    expect(result.content[0]?.text).toBe('done after 6');
  });

  it('maxTotalTimeoutMs bounds a call even while progress keeps arriving', async () => {
    sdk = await startSdkServer({ stateful: true });
    handle = await connect({ url: sdk.url }, { name: 'sdk' });
    const error = await handle
      .callTool(
        'countdown',
        { steps: 20, everyMs: 20 },
        { timeoutMs: 100, onprogress: () => {}, resetTimeoutOnProgress: true, maxTotalTimeoutMs: 150 },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
  });
});
