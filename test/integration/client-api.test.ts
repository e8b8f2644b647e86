/**
 * The typed client API (issue #16 item 3) against real servers: server-everything over
 * Streamable HTTP for every method, and an SDK-built server (servers/sdk-state-server.ts) made to
 * answer with malformed results and with structured output outside the tool's outputSchema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  connect,
  createSupervisor,
  InvalidResultError,
  ProtocolError,
  ToolOutputError,
  type ResourceUpdated,
  type ServerHandle,
} from '../../src/index.js';
import { startEverythingServer, type EverythingServer } from '../../servers/everything-server.js';
import { startStateServer, type StateServer } from '../../servers/sdk-state-server.js';

function nextEvent<T>(handle: ServerHandle, event: 'resourceUpdated', match: (payload: T) => boolean): Promise<T> {
  return new Promise((resolve) => {
    const off = handle.on(event, (payload) => {
      if (!match(payload as T)) return;
      off();
      resolve(payload as T);
    });
  });
}

describe('client API against server-everything (Streamable HTTP)', () => {
  let everything: EverythingServer;
  let handle: ServerHandle;

  beforeAll(async () => {
    everything = await startEverythingServer('streamableHttp');
    handle = await connect({ url: everything.url }, { name: 'everything' });
  }, 30_000);

  afterAll(async () => {
    await handle?.close();
    await everything?.close();
  });

  it('listResources follows every page: the same resources as walking the cursors by hand', async () => {
    const all = await handle.listResources();
    const byHand: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = await handle.request<{ resources: unknown[]; nextCursor?: string }>(
        'resources/list',
        cursor === undefined ? undefined : { cursor },
      );
      byHand.push(...page.resources);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(all.resources.length).toBe(byHand.length);
    expect(all.resources.length).toBeGreaterThan(0);
    expect(all.nextCursor).toBeUndefined();
    for (const resource of all.resources) expect(typeof resource.uri).toBe('string');
  });

  it('listResourceTemplates, then readResource of a listed resource', async () => {
    const { resourceTemplates } = await handle.listResourceTemplates();
    expect(resourceTemplates.length).toBeGreaterThan(0);
    expect(typeof resourceTemplates[0]!.uriTemplate).toBe('string');
    const { resources } = await handle.listResources();
    const read = await handle.readResource(resources[0]!.uri);
    expect(read.contents[0]!.uri).toBe(resources[0]!.uri);
  });

  it('subscribeResource: updates arrive as resourceUpdated; unsubscribeResource stops them', async () => {
    const { resources } = await handle.listResources();
    const uri = resources[0]!.uri;
    await handle.subscribeResource(uri);
    const updated = nextEvent<ResourceUpdated>(handle, 'resourceUpdated', (event) => event.uri === uri);
    // server-everything sends an update for each subscription at once when the updates are switched on.
    await handle.callTool('toggle-subscriber-updates', {});
    expect((await updated).uri).toBe(uri);
    await handle.callTool('toggle-subscriber-updates', {});
    await handle.unsubscribeResource(uri);
  });

  it('listPrompts, getPrompt with arguments, and complete for a prompt argument', async () => {
    const { prompts } = await handle.listPrompts();
    const names = prompts.map((prompt) => prompt.name);
    expect(names.length).toBeGreaterThan(0);
    const withArgs = prompts.find((prompt) => prompt.arguments?.some((argument) => argument.required));
    expect(withArgs).toBeDefined();
    const args = Object.fromEntries(
      withArgs!.arguments!.map((argument) => [argument.name, argument.name === 'department' ? 'Engineering' : 'x']),
    );
    const prompt = await handle.getPrompt(withArgs!.name, args);
    expect(prompt.messages.length).toBeGreaterThan(0);
    const completable = prompts.find((p) => p.name === 'completable-prompt');
    expect(completable).toBeDefined();
    const completion = await handle.complete(
      { type: 'ref/prompt', name: 'completable-prompt' },
      { name: 'department', value: 'E' },
    );
    expect(completion.completion.values).toContain('Engineering');
  });

  it('setLoggingLevel and ping resolve; an unknown level is a ConfigError naming it', async () => {
    await expect(handle.setLoggingLevel('error')).resolves.toBeUndefined();
    await expect(handle.ping()).resolves.toBeUndefined();
    await expect(handle.setLoggingLevel('loud' as never)).rejects.toBeInstanceOf(ConfigError);
    await expect(handle.setLoggingLevel('loud' as never)).rejects.toThrow(/'loud'/);
  });

  it('callTool checks structuredContent against the declared outputSchema (a valid answer passes)', async () => {
    const { tools } = await handle.listTools();
    expect(tools.find((tool) => tool.name === 'get-structured-content')?.outputSchema).toBeDefined();
    const result = await handle.callTool('get-structured-content', { location: 'Chicago' });
    expect(result.structuredContent).toMatchObject({ temperature: expect.any(Number) });
  });
});

describe('malformed answers against an SDK-built server', () => {
  let server: StateServer;
  let handle: ServerHandle;
  let unchecked: ServerHandle;

  beforeAll(async () => {
    server = await startStateServer();
    handle = await connect({ url: server.url }, { name: 'state' });
    unchecked = await connect({ url: server.url, validateToolOutput: false }, { name: 'unchecked' });
  });

  afterAll(async () => {
    await handle?.close();
    await unchecked?.close();
    await server?.close();
  });

  it('a resources/list result with a resource missing its uri is an InvalidResultError naming the field', async () => {
    server.malformed.set('resources/list', { resources: [{ uri: 'memo://a', name: 'a' }, { name: 'b' }] });
    try {
      const error = await handle.listResources().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(InvalidResultError);
      expect(error).toBeInstanceOf(ProtocolError);
      expect(error).toMatchObject({ code: 'PROTOCOL_ERROR', retryable: false, method: 'resources/list' });
      expect((error as InvalidResultError).path).toBe('resources[1].uri');
      expect((error as Error).message).toContain('resources[1].uri');
    } finally {
      server.malformed.delete('resources/list');
    }
    expect((await handle.listResources()).resources.map((r) => r.uri)).toEqual(['memo://note', 'memo://other']);
  });

  it('a result with a __proto__ key comes back as sent, its prototype untouched', async () => {
    server.malformed.set('resources/list', JSON.parse('{"resources":[],"__proto__":{"polluted":true}}'));
    try {
      const result = await handle.listResources();
      expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
      expect((result as Record<string, unknown>).polluted).toBeUndefined();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    } finally {
      server.malformed.delete('resources/list');
    }
  });

  it('malformed results of each method name their field', async () => {
    const cases: [string, unknown, () => Promise<unknown>, string][] = [
      [
        'resources/read',
        { contents: [{ uri: 'memo://note' }] },
        () => handle.readResource('memo://note'),
        'contents[0]',
      ],
      ['prompts/list', { prompts: [{ description: 'no name' }] }, () => handle.listPrompts(), 'prompts[0].name'],
      [
        'prompts/get',
        { messages: [{ role: 'robot', content: { type: 'text', text: 'x' } }] },
        () => handle.getPrompt('p'),
        'messages[0].role',
      ],
      [
        'completion/complete',
        { completion: { values: 'E' } },
        () => handle.complete({ type: 'ref/prompt', name: 'p' }, { name: 'a', value: 'b' }),
        'completion.values',
      ],
      ['tools/call', { content: [{ type: 'text' }] }, () => handle.callTool('touch', { uri: 'x' }), 'content[0].text'],
      ['ping', 'pong', () => handle.ping(), '(root)'],
    ];
    for (const [method, result, call, path] of cases) {
      server.malformed.set(method, result);
      try {
        const error = await call().then(
          () => undefined,
          (caught: unknown) => caught,
        );
        expect(error, method).toBeInstanceOf(InvalidResultError);
        expect((error as InvalidResultError).path, method).toBe(path);
      } finally {
        server.malformed.delete(method);
      }
    }
  });

  it('structuredContent outside the outputSchema is a ToolOutputError naming the path; opting out lets it through', async () => {
    expect((await handle.callTool('weather', { city: 'Oslo' })).structuredContent).toEqual({
      temperature: 4,
      conditions: 'clear',
    });
    server.malformed.set('tools/call', { content: [], structuredContent: { temperature: 'hot', conditions: 'clear' } });
    try {
      // The schema is known once the tools were listed (as an agent does before calling them).
      await handle.listTools();
      const error = await handle.callTool('weather', { city: 'Oslo' }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(ToolOutputError);
      expect(error).toMatchObject({ code: 'PROTOCOL_ERROR', tool: 'weather', path: 'structuredContent.temperature' });
      await unchecked.listTools();
      expect((await unchecked.callTool('weather', { city: 'Oslo' })).structuredContent).toEqual({
        temperature: 'hot',
        conditions: 'clear',
      });
      server.malformed.set('tools/call', { content: [{ type: 'text', text: 'no structure' }] });
      await expect(handle.callTool('weather', { city: 'Oslo' })).rejects.toMatchObject({
        name: 'ToolOutputError',
        path: 'structuredContent',
      });
      server.malformed.set('tools/call', { content: [{ type: 'text', text: 'failed' }], isError: true });
      await expect(handle.callTool('weather', { city: 'Oslo' })).resolves.toMatchObject({ isError: true });
    } finally {
      server.malformed.delete('tools/call');
    }
  });

  it("the supervisor relays resourceUpdated with the server's name", async () => {
    const sup = createSupervisor({ servers: { notes: { url: server.url, keepalive: false } } });
    try {
      await sup.start();
      const seen: { server: string; uri: string }[] = [];
      sup.on('resourceUpdated', (event) => seen.push({ server: event.server, uri: event.uri }));
      await sup.server('notes').subscribeResource('memo://note');
      await sup.server('notes').callTool('touch', { uri: 'memo://note' });
      expect(seen).toEqual([{ server: 'notes', uri: 'memo://note' }]);
    } finally {
      await sup.stop();
    }
  });

  it('the schemas are learned from tools/list and refreshed after list_changed before the next call', async () => {
    const fresh = await connect({ url: server.url }, { name: 'fresh' });
    try {
      // Nothing listed yet: no schema known, nothing to check against.
      server.malformed.set('tools/call', { content: [], structuredContent: { temperature: 'hot' } });
      await expect(fresh.callTool('weather', { city: 'Oslo' })).resolves.toBeDefined();
      await fresh.listTools();
      await expect(fresh.callTool('weather', { city: 'Oslo' })).rejects.toBeInstanceOf(ToolOutputError);
      // The server announces a new tools list without the outputSchema: the next call lists again first.
      server.malformed.set('tools/list', {
        tools: [{ name: 'weather', inputSchema: { type: 'object' } }],
      });
      const listsBefore = server.latest()!.methods.filter((m) => m === 'tools/list').length;
      server.malformed.delete('tools/call');
      const changed = new Promise<void>((resolve) => fresh.on('listChanged', () => resolve()));
      await fresh.request('tools/call', { name: 'announce-tools-changed', arguments: {} });
      await changed;
      server.malformed.set('tools/call', { content: [], structuredContent: { temperature: 'hot' } });
      await expect(fresh.callTool('weather', { city: 'Oslo' })).resolves.toBeDefined();
      expect(server.latest()!.methods.filter((m) => m === 'tools/list').length).toBe(listsBefore + 1);
    } finally {
      server.malformed.delete('tools/call');
      server.malformed.delete('tools/list');
      await fresh.close();
    }
  });
});
