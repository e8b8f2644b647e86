// An MCP server over stdio built with the official v2 server package, in one of its modes:
// `modern` (serveStdio, legacy: 'reject'), `dual` (serveStdio, legacy: 'serve') or `legacy`
// (McpServer.connect(StdioServerTransport), the 2025 handshake only). Test fixture code.
import { McpServer } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';

const mode = process.argv[2] ?? 'dual';

const CONFIG_URI = 'file:///project/config.json';

function build() {
  const server = new McpServer(
    { name: `v2-stdio-${mode}`, version: '2.0.0' },
    { capabilities: { resources: { subscribe: true } } },
  );
  server.registerTool(
    'echo',
    { description: 'Echo the given text', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text: `${text} (pid ${process.pid})` }] }),
  );
  server.registerTool('exit', { description: 'The process exits at once' }, async () => {
    setImmediate(() => process.exit(3));
    return { content: [{ type: 'text', text: 'bye' }] };
  });
  // A new tool: the server sends notifications/tools/list_changed (on the listen, modern era).
  server.registerTool('add-tool', { inputSchema: z.object({ name: z.string() }) }, async ({ name }) => {
    server.registerTool(name, { description: `Added later: ${name}` }, async () => ({
      content: [{ type: 'text', text: name }],
    }));
    return { content: [{ type: 'text', text: `added ${name}` }] };
  });
  server.registerTool('touch', { inputSchema: z.object({ uri: z.string() }) }, async ({ uri }) => {
    await server.server.sendResourceUpdated({ uri });
    return { content: [{ type: 'text', text: `touched ${uri}` }] };
  });
  server.registerResource('config', CONFIG_URI, { mimeType: 'application/json' }, async (uri) => ({
    contents: [{ uri: uri.href, text: '{}' }],
  }));
  // Waits for the client's cancellation (over stdio: notifications/cancelled) and says so on stderr.
  server.registerTool('wait', { description: 'Waits until the call is cancelled' }, async (ctx) => {
    const { signal } = ctx.mcpReq;
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    process.stderr.write(`cancelled request ${String(ctx.mcpReq.id)}\n`);
    return { content: [{ type: 'text', text: 'cancelled' }] };
  });
  return server;
}

if (mode === 'legacy') await build().connect(new StdioServerTransport());
else serveStdio(() => build(), { legacy: mode === 'modern' ? 'reject' : 'serve' });
