/**
 * SEP-2243 on the modern Streamable HTTP wire, against a hand-written modern server
 * (servers/modern-fixture.ts) that checks `Mcp-Param-*` like the spec's Server Validation, and
 * against the official v2 server package: parameter mirroring, invalid tool definitions, -32020,
 * the per-request log level and stream-close cancellation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  connect,
  HeaderMismatchError,
  InvalidToolDefinitionError,
  RequestAbortedError,
  type ServerHandle,
} from '../../../src/index.js';
import { startModernFixture, type ModernFixture } from '../../../servers/modern-fixture.js';
import { startV2Server, type V2Server } from './v2-server.js';

let fixture: ModernFixture | undefined;
let v2: V2Server | undefined;
let handle: ServerHandle | undefined;
afterEach(async () => {
  await handle?.close().catch(() => {});
  await fixture?.close();
  await v2?.close();
  fixture = v2 = handle = undefined;
});

const REGIONAL = {
  name: 'regional',
  inputSchema: {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      priority: { type: 'integer', 'x-mcp-header': 'Priority' },
      verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
      greeting: { type: 'string', 'x-mcp-header': 'Greeting' },
      scope: { type: 'object', properties: { tenant: { type: 'string', 'x-mcp-header': 'Tenant' } } },
      query: { type: 'string' },
    },
  },
};

async function open(tools: Record<string, unknown>[]): Promise<{ fixture: ModernFixture; handle: ServerHandle }> {
  fixture = await startModernFixture(tools);
  handle = await connect({ url: fixture.url, keepalive: false, requestTimeoutMs: 5_000 });
  expect(handle.status().era).toBe('modern');
  return { fixture, handle };
}

describe('x-mcp-header parameter mirroring', () => {
  it('mirrors annotated arguments into Mcp-Param-* (Base64 sentinel, integers, booleans, nested; null and unannotated left out)', async () => {
    const { fixture, handle } = await open([REGIONAL]);
    await handle.listTools();
    await handle.callTool('regional', {
      region: 'us-west1',
      priority: 42,
      verbose: false,
      greeting: 'Hello, 世界',
      scope: { tenant: ' padded ' },
      query: 'SELECT 1',
    });
    await handle.callTool('regional', { region: 'eu', verbose: null, query: 'x' });
    const [first, second] = fixture.posts('tools/call');
    expect(first!.headers).toMatchObject({
      'mcp-method': 'tools/call',
      'mcp-name': 'regional',
      'mcp-param-region': 'us-west1',
      'mcp-param-priority': '42',
      'mcp-param-verbose': 'false',
      'mcp-param-greeting': '=?base64?SGVsbG8sIOS4lueVjA==?=',
      'mcp-param-tenant': '=?base64?IHBhZGRlZCA=?=',
    });
    expect(Object.keys(first!.headers).filter((h) => h === 'mcp-param-query')).toEqual([]);
    expect(Object.keys(second!.headers).filter((h) => h.startsWith('mcp-param-'))).toEqual(['mcp-param-region']);
    expect(fixture.posts('tools/call')).toHaveLength(2); // no -32020, no retry
  });

  it('a call without a prior list goes without headers; the -32020 is answered by one list and one retry', async () => {
    const { fixture, handle } = await open([REGIONAL]);
    const result = await handle.callTool('regional', { region: 'us-west1', query: 'x' });
    expect(result.content[0]).toMatchObject({ type: 'text' });
    const calls = fixture.posts('tools/call');
    expect(calls.map((c) => c.headers['mcp-param-region'])).toEqual([undefined, 'us-west1']);
    expect(fixture.posts('tools/list')).toHaveLength(1);
  });

  it('a stale list is refreshed by the -32020; one the new list does not explain is a HeaderMismatchError, with no loop', async () => {
    const { fixture, handle } = await open([{ name: 'plain', inputSchema: { type: 'object' } }]);
    await handle.listTools();
    // The server's tool now declares A: the client's list is stale, the list after the -32020 is not.
    fixture.tools = [
      { name: 'plain', inputSchema: { type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'A' } } } },
    ];
    await expect(handle.callTool('plain', { a: 'x' })).resolves.toBeDefined();
    expect(fixture.posts('tools/call').map((c) => c.headers['mcp-param-a'])).toEqual([undefined, 'x']);

    // A header no list declares: one list, then the server's error, naming the header.
    fixture.demand = 'Mcp-Param-B';
    const listsBefore = fixture.posts('tools/list').length;
    const error = await handle.callTool('plain', { a: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HeaderMismatchError);
    expect(error).toMatchObject({ rpcCode: -32020, header: 'Mcp-Param-B' });
    expect(fixture.posts('tools/call')).toHaveLength(3);
    expect(fixture.posts('tools/list').length - listsBefore).toBe(1);
  });
});

describe('invalid tool definitions', () => {
  const INVALID = [
    ['empty', { v: { type: 'string', 'x-mcp-header': '' } }, /empty/],
    ['object', { v: { type: 'object', 'x-mcp-header': 'Data' } }, /only string, integer and boolean/],
    ['number', { v: { type: 'number', 'x-mcp-header': 'Score' } }, /only string, integer and boolean/],
    ['space', { v: { type: 'string', 'x-mcp-header': 'My Region' } }, /token/],
    ['non_ascii', { v: { type: 'string', 'x-mcp-header': 'Région' } }, /token/],
    [
      'duplicate',
      { a: { type: 'string', 'x-mcp-header': 'MyField' }, b: { type: 'string', 'x-mcp-header': 'myfield' } },
      /repeats "MyField"/,
    ],
  ] as const;

  it('are left out of listTools with a warning naming tool and reason; valid tools stay usable; calling one is refused', async () => {
    const tools = [
      REGIONAL,
      ...INVALID.map(([name, properties]) => ({ name, inputSchema: { type: 'object', properties } })),
      {
        name: 'under_items',
        inputSchema: {
          type: 'object',
          properties: { list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } },
        },
      },
    ];
    const { fixture, handle } = await open(tools);
    const warnings: Error[] = [];
    handle.on('warning', (w) => warnings.push(w));
    const { tools: listed } = await handle.listTools();
    expect(listed.map((t) => t.name)).toEqual(['regional']);
    expect(warnings).toHaveLength(INVALID.length + 1);
    for (const [name, , reason] of INVALID) {
      const warning = warnings.find((w) => (w as InvalidToolDefinitionError).tool === name);
      expect(warning).toBeInstanceOf(InvalidToolDefinitionError);
      expect(warning!.message).toMatch(reason);
    }
    expect(handle.rejectedTools().map((r) => r.tool)).toContain('under_items');
    await handle.listTools();
    expect(warnings).toHaveLength(INVALID.length + 1); // the same rejections are not warned twice

    await expect(handle.callTool('regional', { region: 'x' })).resolves.toBeDefined();
    const refused = await handle.callTool('duplicate', { a: 'x' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidToolDefinitionError);
    expect(refused).toMatchObject({ tool: 'duplicate', code: 'PROTOCOL_ERROR' });
    expect((refused as Error).message).toMatch(/tool 'duplicate'.*case-insensitive/);
    expect(fixture.posts('tools/call').map((c) => c.body.params?.name)).toEqual(['regional']);
  });
});

describe('per-request log level (logging/setLevel is gone in 2026-07-28)', () => {
  it('setLoggingLevel sends nothing; every later request carries io.modelcontextprotocol/logLevel', async () => {
    const { fixture, handle } = await open([{ name: 'log', inputSchema: { type: 'object' } }]);
    const logs: string[] = [];
    handle.on('log', (log) => logs.push(log.level));
    await handle.callTool('log', {});
    expect(logs).toEqual([]);
    await handle.setLoggingLevel('info');
    await handle.callTool('log', {});
    expect(fixture.seen.map((p) => p.method)).not.toContain('logging/setLevel');
    const [before, after] = fixture.posts('tools/call');
    expect(before!.body.params?._meta).not.toHaveProperty(['io.modelcontextprotocol/logLevel']);
    expect(after!.body.params?._meta).toMatchObject({ 'io.modelcontextprotocol/logLevel': 'info' });
    expect(logs).toEqual(['info', 'error']);
    await expect(handle.request('logging/setLevel', { level: 'loud' })).rejects.toMatchObject({ rpcCode: -32602 });
  });
});

describe('stream-close cancellation', () => {
  it('an aborted call closes its response stream and sends no notifications/cancelled', async () => {
    const { fixture, handle } = await open([{ name: 'hang', inputSchema: { type: 'object' } }]);
    const controller = new AbortController();
    const call = handle.callTool('hang', {}, { signal: controller.signal });
    await fixture.hanging();
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(RequestAbortedError);
    await expect.poll(() => fixture.closedStreams).toHaveLength(1);
    await handle.listTools(); // a later request: a notification sent at the abort would have come first
    expect(fixture.seen.map((p) => p.method)).not.toContain('notifications/cancelled');
  });
});

describe('with the official v2 server (@modelcontextprotocol/server)', () => {
  it('mirrors Mcp-Param-Region as its validation requires; a call before any list recovers from its -32020', async () => {
    v2 = await startV2Server('modern');
    handle = await connect({ url: v2.url, keepalive: false, requestTimeoutMs: 5_000 });
    const first = await handle.callTool('regional', { region: 'eu-north1', query: 'q' });
    expect(first.content[0]).toMatchObject({ text: 'region eu-north1' });
    const second = await handle.callTool('regional', { region: 'Zürich', query: 'q' });
    expect(second.content[0]).toMatchObject({ text: 'region Zürich' });
    const calls = v2.seen.filter((s) => (s.body as { method?: string })?.method === 'tools/call');
    expect(calls.map((c) => c.headers['mcp-param-region'])).toEqual([
      undefined,
      'eu-north1',
      `=?base64?${Buffer.from('Zürich').toString('base64')}?=`,
    ]);
  });
});
