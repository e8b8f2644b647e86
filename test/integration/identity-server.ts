/**
 * An MCP server built with the official SDK (McpServer + StreamableHTTPServerTransport on
 * node:http) that answers each call with the identity it saw: `whoami` returns the `x-user` header
 * of that request and the one its session was opened with. Each session lists a private tool
 * named after the user who opened it (`private_<user>`). It counts sessions opened and closed.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { listenOnLoopback, readBody } from '../../servers/listen.js';

export interface IdentityServer {
  url: string;
  /** Sessions opened so far, by the user that opened each. */
  opened: string[];
  /** Sessions the client ended (DELETE). */
  deleted: number;
  /** Sessions alive now. */
  live(): number;
  close(): Promise<void>;
}

function userOf(req: IncomingMessage): string {
  const value = req.headers['x-user'];
  return typeof value === 'string' ? value : '';
}

export async function startIdentityServer(): Promise<IdentityServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const opened: string[] = [];
  let deleted = 0;

  function newSession(user: string): StreamableHTTPServerTransport {
    const server = new McpServer({ name: 'identity', version: '1.0.0' });
    server.registerTool('whoami', { description: 'who is asking' }, (extra) => {
      const header = extra.requestInfo?.headers['x-user'];
      return { content: [{ type: 'text', text: `${String(header)}|${user}` }] };
    });
    server.registerTool(`private_${user}`, { description: `only for ${user}` }, () => ({
      content: [{ type: 'text', text: user }],
    }));
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
        opened.push(user);
      },
      onsessionclosed: (id) => {
        deleted++;
        sessions.delete(id);
      },
    });
    void server.connect(transport);
    return transport;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const id = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? (JSON.parse(await readBody(req)) as unknown) : undefined;
    const known = typeof id === 'string' ? sessions.get(id) : undefined;
    if (known) return known.handleRequest(req, res, body);
    if (typeof id === 'string') {
      res.writeHead(404).end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    return newSession(userOf(req)).handleRequest(req, res, body);
  }

  const http = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const listening = await listenOnLoopback(http);
  return {
    url: `${listening.origin}/mcp`,
    opened,
    get deleted() {
      return deleted;
    },
    live: () => sessions.size,
    close: () => listening.close(),
  };
}
