/**
 * What an orchestrator asks the HTTP service, beside `/mcp`, without the bearer token (Host and
 * Origin are still checked): `GET /healthz` (the process is up), `GET /readyz` (ready to take
 * sessions: not draining, the store reachable; with the share of upstream servers ready) and, when
 * enabled, `GET /metrics` (Prometheus text, from the OpenTelemetry exporter given).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Gateway } from './gateway.js';

export const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** How long `/readyz` waits for the store before it calls it unreachable. */
const STORE_PROBE_MS = 1_000;
const STORE_PROBE_KEY = 'mcp-supervisor:gateway-readiness-probe';

export interface Readiness {
  ready: boolean;
  draining: boolean;
  store: { name: string; reachable: boolean; error?: string };
  servers: { total: number; ready: number; states: Record<string, number> };
  sessions: number;
}

export async function readiness(gateway: Gateway, draining: boolean, sessions: number): Promise<Readiness> {
  const store = gateway.sessionStore;
  let error: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      store.get(STORE_PROBE_KEY),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${STORE_PROBE_MS} ms`)), STORE_PROBE_MS);
      }),
    ]);
  } catch (cause) {
    error = cause instanceof Error ? cause.message : String(cause);
  } finally {
    clearTimeout(timer);
  }
  const states: Record<string, number> = {};
  const statuses = Object.values(gateway.supervisor.status());
  for (const { state } of statuses) states[state] = (states[state] ?? 0) + 1;
  return {
    ready: !draining && error === undefined,
    draining,
    store: { name: store.name, reachable: error === undefined, ...(error === undefined ? {} : { error }) },
    servers: { total: statuses.length, ready: states['ready'] ?? 0, states },
    sessions,
  };
}

export interface ProbeContext {
  gateway: Gateway;
  draining: () => boolean;
  sessions: () => number;
  /** `/metrics` (Prometheus text); none: 404. */
  metrics: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
}

export async function serveProbe(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  context: ProbeContext,
): Promise<void> {
  if (req.method !== 'GET') return void res.writeHead(405, { allow: 'GET' }).end();
  if (path === '/healthz') return json(res, 200, { status: 'ok' });
  if (path === '/readyz') {
    const report = await readiness(context.gateway, context.draining(), context.sessions());
    return json(res, report.ready ? 200 : 503, report);
  }
  if (!context.metrics) return void res.writeHead(404).end('Not Found (metrics are off: --metrics)');
  context.metrics(req, res);
}

function json(res: ServerResponse, status: number, body: object): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}
