/**
 * `sup.dashboard()`: a local web page of every server, its machine and its calls, served by
 * node:http from what the package holds (page, script, style, diagrams: no CDN, no network). It
 * listens on 127.0.0.1 unless told otherwise; every request must name the dashboard's host and
 * carry its token (guard.ts), else 401/403. Live updates go over Server-Sent Events (feed.ts),
 * each browser's stream bounded (event-stream.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MACHINES } from '../../machines/index.js';
import { machineSvg } from './diagram.js';
import { ConfigError, describeError } from '../core/errors.js';
import { DEFAULT_LIMITS, EventStream, type StreamLimits } from './event-stream.js';
import { Feed, type DashboardSource } from './feed.js';
import { Guard, newToken } from './guard.js';
import { PAGE_HTML } from './page/html.js';
import { PAGE_SCRIPT } from './page/script.js';
import { PAGE_STYLE } from './page/style.js';

export type { DashboardSource } from './feed.js';

export interface DashboardOptions {
  /** The port to listen on; default 0 (a free one: read it from `url`). */
  port?: number | undefined;
  /** The address to listen on; default `127.0.0.1`. Anything else exposes the page to that network (the token still guards it). */
  host?: string | undefined;
  /** Show each call's arguments and result in the activity log (default false: they may hold the user's data). */
  payloads?: boolean | undefined;
}

export interface Dashboard {
  /** Where to point a browser: `http://127.0.0.1:<port>/<token>/`. Whoever has it can see and act. */
  readonly url: string;
  /** Stops listening and ends every open page's stream. */
  close(): Promise<void>;
}

/** @internal Knobs for tests and the bench. */
export interface DashboardTuning {
  limits?: StreamLimits;
  sampleMs?: number;
  heartbeatMs?: number;
}

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
};

const ACTIONS = ['reconnect', 'enable', 'disable'] as const;
type Action = (typeof ACTIONS)[number];

let diagrams: string | undefined;
/** Every machine's SVG, as JSON, made once per process. */
function diagramJson(): string {
  diagrams ??= JSON.stringify(
    Object.fromEntries(Object.entries(MACHINES).map(([name, machine]) => [name, machineSvg(name, machine)])),
  );
  return diagrams;
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

function json(response: ServerResponse, status: number, value: unknown): void {
  send(response, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

export async function startDashboard(
  source: DashboardSource,
  options: DashboardOptions = {},
  tuning: DashboardTuning = {},
): Promise<Dashboard> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new ConfigError(`dashboard: port must be a whole number from 0 to 65535, not ${String(port)}`, [
      { path: 'dashboard.port', message: 'is not a port number' },
    ]);
  const token = newToken();
  const feed = new Feed(source, { payloads: options.payloads ?? false, sampleMs: tuning.sampleMs ?? 1_000 });
  const heartbeatMs = tuning.heartbeatMs ?? 15_000;
  const guard = new Guard(token, host);

  const events = (request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    const stream = new EventStream(response, () => feed.snapshotFrame(), tuning.limits ?? DEFAULT_LIMITS);
    feed.attach(stream);
    stream.send(`retry: 1000\n\n${feed.snapshotFrame()}`);
    const heartbeat = setInterval(() => stream.send(': heartbeat\n\n'), heartbeatMs);
    const end = () => {
      clearInterval(heartbeat);
      feed.detach(stream);
    };
    request.socket.setNoDelay(true);
    response.on('close', end);
  };

  const act = async (response: ServerResponse, name: string, action: Action) => {
    try {
      if (action === 'enable') source.enable(name);
      else if (action === 'disable') await source.disable(name);
      // A reconnect resolves when the server serves again: the page sees that on its stream.
      else source.reconnectServer(name).catch(() => {});
      json(response, 202, { ok: true, server: name, action });
    } catch (error) {
      json(response, 409, { ok: false, error: describeError(error) });
    }
  };

  const route = (request: IncomingMessage, response: ServerResponse, path: string) => {
    const method = request.method ?? 'GET';
    if (method === 'GET' || method === 'HEAD') {
      // The page's own addresses are relative to `/<token>/`.
      if (path === '') return void response.writeHead(308, { ...SECURITY_HEADERS, location: `/${token}/` }).end();
      if (path === '/') return send(response, 200, 'text/html; charset=utf-8', PAGE_HTML);
      if (path === '/app.js') return send(response, 200, 'text/javascript; charset=utf-8', PAGE_SCRIPT);
      if (path === '/app.css') return send(response, 200, 'text/css; charset=utf-8', PAGE_STYLE);
      if (path === '/machines.json') return send(response, 200, 'application/json; charset=utf-8', diagramJson());
      if (path === '/events') return events(request, response);
      if (path === '/api/status') return json(response, 200, feed.snapshot());
      const server = /^\/api\/servers\/([^/]+)$/.exec(path);
      if (server) {
        const found = feed.server(decodeURIComponent(server[1]!));
        return found ? json(response, 200, found) : json(response, 404, { error: 'no such server' });
      }
    }
    const action = /^\/api\/servers\/([^/]+)\/([a-z]+)$/.exec(path);
    if (action && (ACTIONS as readonly string[]).includes(action[2]!)) {
      if (method !== 'POST') return json(response, 405, { error: 'use POST' });
      request.resume();
      return void act(response, decodeURIComponent(action[1]!), action[2] as Action);
    }
    return json(response, 404, { error: 'not found' });
  };

  const server = createServer((request, response) => {
    const verdict = guard.check(request.url, request.headers);
    if (!verdict.ok) {
      request.resume();
      return send(response, verdict.status, 'text/plain; charset=utf-8', `${verdict.reason}\n`);
    }
    try {
      route(request, response, verdict.path);
    } catch {
      if (!response.headersSent) json(response, 400, { error: 'bad request' });
      else response.destroy();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: NodeJS.ErrnoException) => {
    feed.close();
    const why = error.code === 'EADDRINUSE' ? 'is in use' : `cannot be listened on (${error.code ?? error.message})`;
    throw new ConfigError(`dashboard: ${host}:${port} ${why}`, [{ path: 'dashboard.port', message: why }]);
  });
  const bound = (server.address() as AddressInfo).port;
  guard.listening(bound);
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${bound}/${token}/`,
    close: () =>
      new Promise<void>((resolve) => {
        feed.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
