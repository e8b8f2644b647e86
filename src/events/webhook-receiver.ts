/**
 * The webhook side of events (experimental; SEP-3415's Standard Webhooks profile): a `whsec_`
 * secret per subscription, signature verification over the raw body (any of the space-delimited
 * `v1,` signatures, a timestamp at most 5 minutes old), dedupe on `webhook-id`, and a small
 * node:http receiver the host runs (`listen()`) or mounts (`handler`). Each subscription has its
 * own URL (`<publicUrl>/<subscription id>`), so its secret is found before the body is read.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SubscriptionEvent } from '../../machines/subscription.machine.js';
import { ConfigError } from '../core/errors.js';
import { EventOccurrenceSchema, ErrorParamsSchema, terminationFailure } from '../runtime/events/wire.js';

/** Deliveries older than this are refused (the SEP's SHOULD). */
const MAX_AGE_S = 300;
/** Bodies larger than this are refused with 413 (the SEP's delivery profile: servers keep them ≤ 256 KiB). */
const MAX_BODY_BYTES = 256 * 1024;
const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

function secretBytes(secret: string): Buffer {
  const match = SECRET.exec(secret);
  const bytes = match ? Buffer.from(match[1]!, 'base64') : Buffer.alloc(0);
  if (bytes.length < 24 || bytes.length > 64)
    throw new ConfigError('a webhook secret is whsec_ and the base64 of 24 to 64 bytes', [
      { path: 'secret', message: 'not a Standard Webhooks secret' },
    ]);
  return bytes;
}

/** `v1,<base64 HMAC-SHA256(secret, id + "." + timestamp + "." + body)>`. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string | Buffer): string {
  const hmac = createHmac('sha256', secretBytes(secret));
  hmac.update(`${id}.${timestamp}.`);
  hmac.update(body);
  return `v1,${hmac.digest('base64')}`;
}

/** Whether a delivery is signed with `secret` and fresh; `now` in seconds. */
export function verifyWebhook(
  secret: string,
  headers: { id: string | undefined; timestamp: string | undefined; signature: string | undefined },
  body: Buffer,
  now = Math.floor(Date.now() / 1000),
): boolean {
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature || !/^\d+$/.test(timestamp)) return false;
  if (Math.abs(now - Number(timestamp)) > MAX_AGE_S) return false;
  const expected = Buffer.from(signWebhook(secret, id, Number(timestamp), body));
  return signature.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

interface Route {
  secret: string;
  sink: (event: SubscriptionEvent) => void;
  /** `webhook-id`s recently accepted (retries are answered 200 and dropped). */
  recent: Set<string>;
}

export interface WebhookReceiverOptions {
  /**
   * Where the server POSTs, as it reaches this receiver (the SEP requires https; a proxy in front
   * terminates it). Absent: `http://<host>:<port>` of `listen()`, for local tests only.
   */
  publicUrl?: string | undefined;
}

export class WebhookReceiver {
  private readonly routes = new Map<string, Route>();
  private server: Server | undefined;
  private base: string | undefined;

  constructor(options: WebhookReceiverOptions = {}) {
    this.base = options.publicUrl?.replace(/\/+$/, '');
  }

  /** The callback URL of one subscription. */
  urlFor(id: string): string {
    if (this.base === undefined)
      throw new ConfigError('the webhook receiver has no publicUrl and is not listening yet', [
        { path: 'publicUrl', message: 'required until listen()' },
      ]);
    return `${this.base}/${encodeURIComponent(id)}`;
  }

  /** @internal A subscription's deliveries go to `sink` once verified with `secret`. */
  register(id: string, secret: string, sink: (event: SubscriptionEvent) => void): () => void {
    secretBytes(secret);
    const route: Route = { secret, sink, recent: new Set() };
    this.routes.set(id, route);
    return () => {
      if (this.routes.get(id) === route) this.routes.delete(id);
    };
  }

  /** A node:http request handler (mount it under the path of `publicUrl`). */
  readonly handler = (req: IncomingMessage, res: ServerResponse): void => {
    this.handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  };

  /** Runs the receiver on its own node:http server; resolves with the port. */
  async listen(port = 0, host = '127.0.0.1'): Promise<number> {
    const server = (this.server = createServer(this.handler));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const bound = (server.address() as AddressInfo).port;
    this.base ??= `http://${host}:${bound}`;
    return bound;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
    const id = decodeURIComponent((req.url ?? '').split('?')[0]!.split('/').pop() ?? '');
    const route = this.routes.get(id);
    // Not (yet) here: a retryable status, the server delivers again (the subscribe race, a restart).
    if (!route) return void res.writeHead(503, { 'retry-after': '1' }).end();
    const body = await readLimited(req);
    if (!body) return void res.writeHead(413).end();
    const headers = {
      id: header(req, 'webhook-id'),
      timestamp: header(req, 'webhook-timestamp'),
      signature: header(req, 'webhook-signature'),
    };
    if (!verifyWebhook(route.secret, headers, body)) return void res.writeHead(401).end();
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    } catch {
      return void res.writeHead(400).end();
    }
    if (message['type'] === 'verification') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ challenge: message['challenge'] }));
    }
    res.writeHead(200).end();
    if (route.recent.has(headers.id!)) return;
    route.recent.add(headers.id!);
    if (route.recent.size > 1000) route.recent.delete(route.recent.values().next().value!);
    this.forward(route, message);
  }

  private forward(route: Route, message: Record<string, unknown>): void {
    if (message['type'] === 'gap') {
      const cursor = typeof message['cursor'] === 'string' ? message['cursor'] : null;
      return route.sink({ type: 'WEBHOOK_GAP', cursor });
    }
    if (message['type'] === 'terminated') {
      const error = ErrorParamsSchema.safeParse(message);
      return route.sink({
        type: 'TERMINATED',
        failure: terminationFailure(error.success ? error.data.error : { code: -32603, message: 'terminated' }),
      });
    }
    const event = EventOccurrenceSchema.safeParse(message);
    if (event.success) route.sink({ type: 'WEBHOOK_EVENT', event: event.data });
  }
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The body, or undefined when it is larger than the limit. */
function readLimited(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A receiver for webhook subscriptions (`handle.events.subscribe({ mode: 'webhook', receiver })`). */
export function createWebhookReceiver(options: WebhookReceiverOptions = {}): WebhookReceiver {
  return new WebhookReceiver(options);
}
