/**
 * The floor of the gateway's cost (bench/gateway.ts): a bare node:http server that forwards each
 * POST to the upstream with undici, as the gateway does, and does nothing else — no MCP, no
 * checks, no routing. What a call through it adds over a direct connection is the second hop
 * itself (one more HTTP parse, one more upstream request, two more socket writes), the part of
 * the gateway's added time no gateway written on node:http and undici can avoid.
 *
 *   node .bench-build/bench/hop-floor.js <upstream url>   (prints {"url": ...}: its own process)
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

/** Request headers passed on (the MCP ones); the answer's content type and session id come back. */
const FORWARDED = ['content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'mcp-method', 'mcp-name'];

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

export async function startHopFloor(upstreamUrl: string): Promise<{ url: string; close(): Promise<void> }> {
  const upstream = new URL(upstreamUrl);
  const pool = new Pool(upstream.origin);
  const server: Server = createServer((req, res) => {
    // POSTs only: a GET stream forwarded whole would never end, and the client would wait out its open timeout.
    if (req.method === 'GET') return void res.writeHead(405, { allow: 'POST, DELETE' }).end();
    void (async () => {
      const body = await readBody(req);
      const headers: Record<string, string> = {};
      for (const name of FORWARDED) {
        const value = req.headers[name];
        if (typeof value === 'string') headers[name] = value;
      }
      const answer = await pool.request({
        path: upstream.pathname,
        method: req.method ?? 'POST',
        headers,
        body: body.length > 0 ? body : null,
      });
      const text = Buffer.from(await answer.body.arrayBuffer());
      const out: Record<string, string | number> = { 'content-length': text.length };
      for (const name of ['content-type', 'mcp-session-id']) {
        const value = answer.headers[name];
        if (typeof value === 'string') out[name] = value;
      }
      res.writeHead(answer.statusCode, out).end(text);
    })().catch(() => res.destroy());
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.close();
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const floor = await startHopFloor(process.argv[2]!);
  console.log(JSON.stringify({ url: floor.url }));
  // Stopped as `serve` is (SIGTERM): a clean exit, so `--cpu-prof` writes the floor's profile too.
  process.once('SIGTERM', () => void floor.close().then(() => process.exit(0)));
}
