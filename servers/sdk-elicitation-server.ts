/**
 * A 2025-11-25 server built with the official v1 SDK (McpServer, stateful Streamable HTTP, one
 * session) that uses what that revision added for clients: URL-mode elicitation (a request, the
 * completion notification, and the -32042 URLElicitationRequired error) and sampling with tools.
 * Test fixture code.
 *
 * - `open_link`: `elicitInput({ mode: 'url' })`, then `notifications/elicitation/complete` when accepted.
 * - `needs_link`: throws `UrlElicitationRequiredError` (the client must open the link first).
 * - `ask_model`: `createMessage` with a tool; answers with the content the client returned.
 * - `client_capabilities`: what the client declared in `initialize`.
 */
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import { listenOnLoopback, readBody } from './listen.js';

export interface SdkElicitationServer {
  url: string;
  close(): Promise<void>;
}

const LINK = { mode: 'url' as const, message: 'Authorize access', url: 'https://example.com/authorize?x=1' };

function build(): McpServer {
  const server = new McpServer({ name: 'sdk-2025-11-25', version: '1.0.0' });
  const text = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value) }] });
  server.registerTool('open_link', { description: 'Asks the user to open a link' }, async () => {
    const elicitationId = randomUUID();
    const result = await server.server.elicitInput({ ...LINK, elicitationId });
    if (result.action === 'accept') await server.server.createElicitationCompletionNotifier(elicitationId)();
    return text({ action: result.action, elicitationId });
  });
  server.registerTool('needs_link', { description: 'Needs the user to open a link first' }, async () => {
    throw new UrlElicitationRequiredError([{ ...LINK, elicitationId: 'el-42' }]);
  });
  server.registerTool('ask_model', { description: 'Samples with a tool' }, async () => {
    const result = await server.server.createMessage({
      messages: [{ role: 'user', content: { type: 'text', text: 'weather in Paris?' } }],
      maxTokens: 50,
      tools: [{ name: 'get_weather', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } }],
      toolChoice: { mode: 'auto' },
    });
    return text({ stopReason: result.stopReason, content: result.content });
  });
  server.registerTool('client_capabilities', { description: 'What the client declared' }, async () =>
    text(server.server.getClientCapabilities() ?? null),
  );
  return server;
}

export async function startSdkElicitationServer(): Promise<SdkElicitationServer> {
  const server = build();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await server.connect(transport);
  const http = createServer((req, res) => {
    void (async () => {
      const raw = req.method === 'POST' ? await readBody(req) : undefined;
      await transport.handleRequest(req, res, raw ? (JSON.parse(raw) as unknown) : undefined);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const listening = await listenOnLoopback(http);
  return {
    url: `${listening.origin}/mcp`,
    async close() {
      await listening.close();
      await server.close();
    },
  };
}
