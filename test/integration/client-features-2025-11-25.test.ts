/**
 * What 2025-11-25 added for clients, against a server built with the official v1 SDK (which
 * checks the client's capabilities before it asks): URL-mode elicitation (advertised only with a
 * `urlElicitation` handler, the completion notification as an event, -32042 as a typed error),
 * sampling with tools (`sampling.tools` with `sampling: { tools: true }`), and extra capabilities
 * and `extensions` (validated, merged into what `initialize` declares).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  connect,
  createSupervisor,
  McpError,
  UrlElicitationRequiredError,
  type ConnectOptions,
  type ServerHandle,
} from '../../src/index.js';
import { startSdkElicitationServer, type SdkElicitationServer } from '../../servers/sdk-elicitation-server.js';

let server: SdkElicitationServer | undefined;
let handle: ServerHandle | undefined;
afterEach(async () => {
  await handle?.close().catch(() => {});
  await server?.close();
  server = handle = undefined;
});

async function start(options: ConnectOptions): Promise<ServerHandle> {
  server = await startSdkElicitationServer();
  handle = await connect({ url: server.url, keepalive: false, protocolVersion: 'legacy' }, { name: 'v1', ...options });
  return handle;
}

function json(result: { content: Array<{ type: string; [key: string]: unknown }> }): any {
  return JSON.parse(String(result.content[0]!.text));
}

describe('URL-mode elicitation (2025-11-25)', () => {
  it('goes to the urlElicitation handler; the completion arrives as an event', async () => {
    const seen: Record<string, unknown>[] = [];
    const h = await start({
      handlers: {
        elicitation: () => ({ action: 'decline' }),
        urlElicitation: (params) => {
          seen.push(params);
          return { action: 'accept' };
        },
      },
    });
    const completed = new Promise<{ elicitationId: string }>((resolve) => h.on('elicitationComplete', resolve));
    const result = json(await h.callTool('open_link', {}));
    expect(result.action).toBe('accept');
    expect(seen).toEqual([
      expect.objectContaining({
        mode: 'url',
        url: 'https://example.com/authorize?x=1',
        elicitationId: result.elicitationId,
      }),
    ]);
    expect(await completed).toMatchObject({ elicitationId: result.elicitationId });
    expect(json(await h.callTool('client_capabilities', {})).elicitation).toEqual({ form: {}, url: {} });
  });

  it('without a urlElicitation handler, elicitation.url is not advertised and the server may not ask', async () => {
    const h = await start({ handlers: { elicitation: () => ({ action: 'decline' }) } });
    expect(json(await h.callTool('client_capabilities', {})).elicitation).toEqual({ form: {} });
    const result = await h.callTool('open_link', {});
    expect(result.isError).toBe(true); // the SDK refuses to send what the client did not declare
  });

  it('-32042 becomes UrlElicitationRequiredError carrying the elicitations to open', async () => {
    const h = await start({ handlers: { urlElicitation: () => ({ action: 'accept' }) } });
    const error = await h.callTool('needs_link', {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UrlElicitationRequiredError);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({
      code: 'URL_ELICITATION_REQUIRED',
      rpcCode: -32042,
      retryable: true,
      server: 'v1',
      elicitations: [{ mode: 'url', url: 'https://example.com/authorize?x=1', elicitationId: 'el-42' }],
    });
  });
});

describe('sampling with tools (2025-11-25)', () => {
  it('sampling: { tools: true } advertises sampling.tools; tool_use content passes through both ways', async () => {
    let request: Record<string, unknown> | undefined;
    const h = await start({
      handlers: {
        sampling: (params) => {
          request = params;
          return {
            role: 'assistant',
            model: 'test',
            stopReason: 'toolUse',
            content: [{ type: 'tool_use', id: 'call-1', name: 'get_weather', input: { city: 'Paris' } }],
          };
        },
      },
      sampling: { tools: true },
    });
    expect(json(await h.callTool('client_capabilities', {})).sampling).toEqual({ tools: {} });
    expect(json(await h.callTool('ask_model', {}))).toEqual({
      stopReason: 'toolUse',
      content: [{ type: 'tool_use', id: 'call-1', name: 'get_weather', input: { city: 'Paris' } }],
    });
    expect(request).toMatchObject({ tools: [{ name: 'get_weather' }], toolChoice: { mode: 'auto' } });
  });

  it('without the option, sampling.tools is not advertised and the server may not send tools', async () => {
    const h = await start({
      handlers: { sampling: () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: '' } }) },
    });
    expect(json(await h.callTool('client_capabilities', {})).sampling).toEqual({});
    expect((await h.callTool('ask_model', {})).isError).toBe(true);
  });
});

describe('extra capabilities and extensions', () => {
  it('are merged into what initialize declares', async () => {
    const h = await start({
      handlers: { sampling: () => ({}) },
      capabilities: { experimental: { 'com.example/trace': { level: 1 } }, sampling: { context: {} } },
      extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html'] } },
    });
    expect(json(await h.callTool('client_capabilities', {}))).toEqual({
      sampling: { context: {} },
      experimental: { 'com.example/trace': { level: 1 } },
      extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html'] } },
    });
  });

  it.each([
    [{ extensions: { 'no-prefix': {} } }, /extensions\["no-prefix"\] is not an extension identifier/],
    [{ extensions: { 'com.example/x': 'yes' } }, /extensions\["com.example\/x"\] must be a settings object/],
    [{ capabilities: { sampling: {} } }, /capabilities.sampling is declared without a handler/],
    [{ capabilities: { experimental: true } }, /capabilities.experimental must be an object/],
    [{ maxInputRounds: 0 }, /maxInputRounds must be a positive integer/],
  ])('invalid: %j is a ConfigError naming it', (options, message) => {
    const create = () =>
      createSupervisor({ servers: { a: { url: 'http://127.0.0.1:1/mcp' } }, ...(options as object) });
    expect(create).toThrow(ConfigError);
    expect(create).toThrow(message);
  });
});
