/**
 * The tool catalog's cost: `sup.tools()` over `servers` servers of `tools` tools each (default
 * 50 × 40 = 2,000 tools), all on one local node:http Streamable HTTP server (JSON answers, a path
 * per server, a GET stream per session for notifications):
 *
 * - first: the first `sup.tools()` after start (every server's tools/list, names for all);
 * - cached: `sup.tools()` while nothing changed, median and slowest of `rounds` calls;
 * - after a listChanged: one server sends notifications/tools/list_changed with changed tools;
 *   from its arrival, the next `sup.tools()` (it waits for that server's listing, then renames
 *   all), median and slowest of 20;
 * - rebuild: `sup.tools()` right after `changed` (the listing done: the names and the snapshot
 *   rebuilt for every tool), median of 20.
 *
 *   node .bench-build/bench/catalog.js [servers] [tools]   (or --import tsx bench/catalog.ts)
 *
 * Prints the CatalogReport as JSON. The server runs in this process: the times include its side.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { createSupervisor } from '../src/index.js';
import { listenOnLoopback, readBody } from '../servers/listen.js';

export interface CatalogReport {
  servers: number;
  toolsPerServer: number;
  tools: number;
  firstMs: number;
  cachedMedianUs: number;
  cachedMaxUs: number;
  afterListChangedMedianMs: number;
  afterListChangedMaxMs: number;
  rebuildMedianMs: number;
}

interface ToolsServer {
  url(index: number): string;
  /** Changes server `index`'s tools and sends it notifications/tools/list_changed; returns the new revision. */
  changeTools(index: number): number;
  close(): Promise<void>;
}

async function startToolsServer(servers: number, toolsPerServer: number): Promise<ToolsServer> {
  const revision = new Array<number>(servers).fill(0);
  const streams = new Map<number, ServerResponse>();
  const toolsOf = (index: number) =>
    Array.from({ length: toolsPerServer }, (_, tool) => ({
      name: `tool-${tool}.v${revision[index]}`,
      description: `tool ${tool} of server ${index}, revision ${revision[index]}`,
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    }));
  const answer = (res: ServerResponse, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(200, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const index = Number(/^\/s(\d+)$/.exec(req.url ?? '')?.[1] ?? -1);
    if (!(index >= 0 && index < servers)) return void res.writeHead(404).end();
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      streams.set(index, res);
      return;
    }
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const message = JSON.parse(await readBody(req)) as {
      id?: number;
      method: string;
      params?: { protocolVersion?: string };
    };
    if (message.id === undefined) return void res.writeHead(202).end();
    switch (message.method) {
      case 'initialize':
        return answer(
          res,
          {
            jsonrpc: '2.0',
            id: message.id,
            result: {
              protocolVersion: message.params?.protocolVersion ?? '2025-11-25',
              capabilities: { tools: { listChanged: true } },
              serverInfo: { name: `bench-${index}`, version: '1.0.0' },
            },
          },
          { 'mcp-session-id': randomUUID() },
        );
      case 'tools/list':
        return answer(res, { jsonrpc: '2.0', id: message.id, result: { tools: toolsOf(index) } });
      default:
        return answer(res, { jsonrpc: '2.0', id: message.id, result: {} });
    }
  };
  const listening = await listenOnLoopback(createServer((req, res) => void handle(req, res)));
  return {
    url: (index) => `${listening.origin}/s${index}`,
    changeTools(index) {
      revision[index]!++;
      const notification = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      streams.get(index)?.write(`data: ${notification}\n\n`);
      return revision[index]!;
    },
    close: () => listening.close(),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));

export async function runCatalogBench(servers = 50, toolsPerServer = 40, rounds = 1000): Promise<CatalogReport> {
  const backend = await startToolsServer(servers, toolsPerServer);
  const sup = createSupervisor({
    servers: Object.fromEntries(
      Array.from({ length: servers }, (_, index) => [`server${index}`, { url: backend.url(index), keepalive: false }]),
    ),
  });
  try {
    await sup.start();
    let started = performance.now();
    const first = await sup.tools();
    const firstMs = performance.now() - started;
    if (first.tools.length !== servers * toolsPerServer) throw new Error(`listed ${first.tools.length} tools`);

    const cached: number[] = [];
    for (let i = 0; i < rounds; i++) {
      started = performance.now();
      await sup.tools();
      cached.push((performance.now() - started) * 1000);
    }

    const afterChange: number[] = [];
    const rebuild: number[] = [];
    for (let i = 0; i < 20; i++) {
      const index = i % servers;
      const arrived = new Promise<void>((resolve) => {
        const off = sup.on('listChanged', ({ server }) => {
          if (server !== `server${index}`) return;
          off();
          resolve();
        });
      });
      const revision = backend.changeTools(index);
      await arrived;
      started = performance.now();
      const after = await sup.tools();
      afterChange.push(performance.now() - started);
      if (!after.tools.some((tool) => tool.server === `server${index}` && tool.originalName.endsWith(`.v${revision}`)))
        throw new Error('the change did not show');
      // The rebuild alone: the listing is done, the snapshot is dropped by the next change.
      backend.changeTools(index);
      await new Promise<void>((resolve) => {
        const off = sup.catalog.on('changed', () => {
          off();
          resolve();
        });
      });
      started = performance.now();
      await sup.tools();
      rebuild.push(performance.now() - started);
    }
    return {
      servers,
      toolsPerServer,
      tools: servers * toolsPerServer,
      firstMs: round(firstMs, 1),
      cachedMedianUs: round(median(cached), 2),
      cachedMaxUs: round(Math.max(...cached), 1),
      afterListChangedMedianMs: round(median(afterChange), 2),
      afterListChangedMaxMs: round(Math.max(...afterChange), 2),
      rebuildMedianMs: round(median(rebuild), 2),
    };
  } finally {
    await sup.stop();
    await backend.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [servers, tools] = process.argv.slice(2).map(Number);
  console.log(JSON.stringify(await runCatalogBench(servers || 50, tools || 40), null, 2));
}
