/**
 * A server built with the official SDK, like its stateless example, whose `trace-meta` tool
 * answers with the `_meta` its handler received (where the client puts trace context).
 */
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { listenOnLoopback, readBody } from '../../servers/listen.js';

export interface MetaServer {
  url: string;
  close(): Promise<void>;
}

export async function startMetaServer(): Promise<MetaServer> {
  const httpServer = createServer((req, res) => {
    void (async () => {
      const body = JSON.parse(await readBody(req)) as unknown;
      const server = new McpServer({ name: 'meta-server', version: '1.0.0' });
      server.registerTool('trace-meta', { description: 'Answers with the _meta it received' }, (extra) => ({
        content: [{ type: 'text', text: JSON.stringify(extra._meta ?? {}) }],
      }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => res.destroy());
  });
  const listening = await listenOnLoopback(httpServer);
  return { url: `${listening.origin}/mcp`, close: () => listening.close() };
}
