/**
 * A 2026-07-28 Streamable HTTP server with the Events extension (SEP-3415, draft, read
 * 2026-12-07), written from the SEP on node:http (no SDK implements it): `events/list`,
 * `events/poll`, `events/stream` (an SSE response: `active`, events, heartbeats with the cursor),
 * `events/subscribe` / `events/unsubscribe` (webhook POSTs with Standard Webhooks signatures, the
 * verification handshake first). The upstream is a durable log: cursor `c-<n>` is the position
 * after event n, and it outlives a restart. Event type `ticks` replays from cursors; `cursorless`
 * has no history (every cursor null).
 *
 * Fault switches: `freezeStreams()` (streams stay open, nothing more is written: heartbeats stop),
 * `dropStreams()` (sockets destroyed), `restart({ forget })` (webhook subscriptions lost),
 * `truncateNext()` (the next answer skips to the head with `truncated: true`), `rateLimit(n)` (the
 * next n polls answer 429). Test fixture code only.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, readBody, type Listening } from './listen.js';
import { formatSseEvent, startSse } from './sse-writer.js';

const VERSION = '2026-07-28';
const EVENTS = 'io.modelcontextprotocol/events';
const SUB_META = 'io.modelcontextprotocol/subscriptionId';

export interface EventsServerOptions {
  heartbeatMs?: number;
  nextPollMs?: number;
  /** Events per poll answer (then `hasMore`). */
  maxEvents?: number;
  /** The TTL granted to webhook subscriptions (capped by the client's `ttlMs`). */
  webhookTtlMs?: number;
  /** The `delivery` of `ticks` (default all three). */
  delivery?: Array<'poll' | 'push' | 'webhook'>;
}

interface LoggedEvent {
  seq: number;
  eventId: string;
  name: string;
  timestamp: string;
  data: Record<string, unknown>;
}

interface OpenStream {
  name: string;
  id: unknown;
  position: number;
  res: ServerResponse;
  frozen: boolean;
  heartbeat: NodeJS.Timeout;
}

interface WebhookSubscription {
  id: string;
  name: string;
  url: string;
  secrets: string[];
  position: number;
  expiresAt: number;
}

export interface EventsServer {
  url: string;
  /** Appends an event to the log and delivers it to every live stream and webhook of its type. */
  emit(name: string, data?: Record<string, unknown>): LoggedEvent;
  /** Requests seen, by method. */
  count(method: string): number;
  readonly requests: Array<{ method: string; params: Record<string, unknown> }>;
  openStreams(): number;
  webhooks(): number;
  freezeStreams(): void;
  dropStreams(): void;
  truncateNext(): void;
  rateLimit(times: number): void;
  /** Webhook POSTs made (with their status). */
  readonly deliveries: Array<{ url: string; status: number; body: string }>;
  restart(options?: { forget?: boolean }): Promise<void>;
  close(): Promise<void>;
}

function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

function validSecret(secret: unknown): secret is string {
  if (typeof secret !== 'string' || !secret.startsWith('whsec_')) return false;
  const bytes = Buffer.from(secret.slice(6), 'base64');
  return bytes.length >= 24 && bytes.length <= 64;
}

/** POSTs a signed body; resolves with the status and the response body. */
function post(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = httpRequest(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end(body);
  });
}

export async function startEventsServer(options: EventsServerOptions = {}): Promise<EventsServer> {
  const heartbeatMs = options.heartbeatMs ?? 1000;
  const log: LoggedEvent[] = [];
  const streams = new Set<OpenStream>();
  let webhooks = new Map<string, WebhookSubscription>();
  const requests: EventsServer['requests'] = [];
  const deliveries: EventsServer['deliveries'] = [];
  let truncate = false;
  let limited = 0;

  const types = [
    { name: 'ticks', delivery: options.delivery ?? ['poll', 'push', 'webhook'], inputSchema: { type: 'object' } },
    { name: 'cursorless', delivery: ['poll', 'push'], inputSchema: { type: 'object' } },
  ];
  const replays = (name: string) => name === 'ticks';
  const head = () => log.length;
  const cursorOf = (name: string, position: number) => (replays(name) ? `c-${position}` : null);
  const positionOf = (cursor: unknown): number | undefined =>
    typeof cursor === 'string' && /^c-\d+$/.test(cursor) ? Number(cursor.slice(2)) : undefined;
  const after = (name: string, position: number) => log.filter((e) => e.name === name && e.seq > position);
  const occurrence = (e: LoggedEvent, name: string) => ({
    eventId: e.eventId,
    name: e.name,
    timestamp: e.timestamp,
    data: e.data,
    cursor: cursorOf(name, e.seq),
  });
  /** Where a request starts: its cursor, or the head (null, cursorless, or truncated). */
  function start(name: string, cursor: unknown): { position: number; truncated: boolean } {
    const position = replays(name) ? positionOf(cursor) : undefined;
    if (position === undefined) return { position: head(), truncated: false };
    if (truncate) {
      truncate = false;
      return { position: head(), truncated: position < head() };
    }
    return { position, truncated: false };
  }

  function answer(method: string, params: Record<string, unknown>): { result?: unknown; error?: unknown } {
    const name = typeof params['name'] === 'string' ? params['name'] : '';
    const known = types.some((t) => t.name === name);
    switch (method) {
      case 'server/discover':
        return {
          result: {
            resultType: 'complete',
            supportedVersions: [VERSION],
            capabilities: { tools: {}, extensions: { [EVENTS]: { listChanged: true } } },
            _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'events-fixture', version: '1.0.0' } },
          },
        };
      case 'tools/list':
        return { result: { resultType: 'complete', tools: [] } };
      case 'events/list':
        return { result: { resultType: 'complete', events: types } };
      case 'events/poll': {
        if (!known) return { error: { code: -32023, message: 'NotFound', data: { kind: 'event' } } };
        const from = start(name, params['cursor']);
        if (params['cursor'] === null || params['cursor'] === undefined)
          return page([], name, from.position, from.truncated, false);
        const pending = after(name, from.position);
        const max = Number(params['maxEvents'] ?? options.maxEvents ?? 100);
        const batch = pending.slice(0, max);
        const position = batch.length > 0 ? batch[batch.length - 1]!.seq : Math.max(from.position, head());
        return page(batch, name, position, from.truncated, pending.length > max);
      }
      case 'events/subscribe': {
        if (!known) return { error: { code: -32023, message: 'NotFound', data: { kind: 'event' } } };
        const delivery = (params['delivery'] ?? {}) as { url?: unknown; secret?: unknown };
        if (typeof delivery.url !== 'string' || !validSecret(delivery.secret))
          return { error: { code: -32602, message: 'InvalidParams: delivery.url and a whsec_ secret are required' } };
        return { result: undefined }; // answered asynchronously (the verification handshake)
      }
      case 'events/unsubscribe': {
        const delivery = (params['delivery'] ?? {}) as { url?: unknown };
        const id = `sub_${name}_${String(delivery.url)}`;
        if (!webhooks.delete(id))
          return { error: { code: -32023, message: 'NotFound', data: { kind: 'subscription' } } };
        return { result: { resultType: 'complete' } };
      }
      default:
        return { error: { code: -32601, message: `Method not found: ${method}` } };
    }
  }

  function page(batch: LoggedEvent[], name: string, position: number, truncated: boolean, hasMore: boolean) {
    return {
      result: {
        resultType: 'complete',
        events: batch.map((e) => occurrence(e, name)),
        cursor: cursorOf(name, position),
        truncated,
        hasMore,
        nextPollMs: options.nextPollMs ?? 1000,
      },
    };
  }

  async function subscribe(params: Record<string, unknown>): Promise<unknown> {
    const name = String(params['name']);
    const delivery = params['delivery'] as { url: string; secret: string };
    const id = `sub_${name}_${delivery.url}`;
    const existing = webhooks.get(id);
    const from = start(name, params['cursor']);
    if (!existing) {
      // Endpoint verification: the receiver echoes the challenge, signed like any delivery.
      const challenge = randomBytes(12).toString('hex');
      const reply = await signedPost(delivery.url, [delivery.secret], id, `msg_verification_${challenge}`, {
        type: 'verification',
        challenge,
      });
      const echoed = (() => {
        try {
          return (JSON.parse(reply.body) as { challenge?: unknown }).challenge === challenge;
        } catch {
          return false;
        }
      })();
      if (reply.status < 200 || reply.status > 299 || !echoed)
        return { error: { code: -32027, message: 'CallbackEndpointError', data: { reason: 'challenge_failed' } } };
    }
    const suggested = typeof params['ttlMs'] === 'number' ? params['ttlMs'] : Infinity;
    const ttl = Math.min(suggested, options.webhookTtlMs ?? 60_000);
    const subscription: WebhookSubscription = {
      id,
      name,
      url: delivery.url,
      secrets:
        existing && existing.secrets[0] !== delivery.secret
          ? [delivery.secret, existing.secrets[0]!]
          : [delivery.secret],
      // A live subscription keeps its in-flight position; a new one starts at the cursor and replays.
      position: existing ? existing.position : from.position,
      expiresAt: Date.now() + ttl,
    };
    webhooks.set(id, subscription);
    if (!existing) for (const e of after(name, subscription.position)) void deliver(subscription, e);
    return {
      result: {
        resultType: 'complete',
        id,
        refreshBefore: new Date(subscription.expiresAt).toISOString(),
        cursor: cursorOf(name, subscription.position),
        truncated: from.truncated,
      },
    };
  }

  function signedPost(url: string, secrets: string[], subscriptionId: string, messageId: string, message: unknown) {
    const body = JSON.stringify(message);
    const timestamp = Math.floor(Date.now() / 1000);
    return post(url, body, {
      'webhook-id': messageId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': secrets.map((secret) => sign(secret, messageId, timestamp, body)).join(' '),
      'x-mcp-subscription-id': subscriptionId,
    });
  }

  async function deliver(subscription: WebhookSubscription, e: LoggedEvent): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (webhooks.get(subscription.id) !== subscription) return;
      const body = occurrence(e, subscription.name);
      const reply = await signedPost(subscription.url, subscription.secrets, subscription.id, e.eventId, body);
      deliveries.push({ url: subscription.url, status: reply.status, body: JSON.stringify(body) });
      if (reply.status >= 200 && reply.status < 300) {
        subscription.position = Math.max(subscription.position, e.seq);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    }
  }

  function openStream(id: unknown, params: Record<string, unknown>, res: ServerResponse): void {
    const name = String(params['name']);
    const from = start(name, params['cursor']);
    startSse(res);
    const stream: OpenStream = {
      name,
      id,
      position: from.position,
      res,
      frozen: false,
      heartbeat: setInterval(() => {
        write(stream, 'notifications/events/heartbeat', { cursor: cursorOf(name, Math.max(stream.position, head())) });
      }, heartbeatMs),
    };
    streams.add(stream);
    res.on('close', () => {
      clearInterval(stream.heartbeat);
      streams.delete(stream);
    });
    write(stream, 'notifications/events/active', { cursor: cursorOf(name, from.position), truncated: from.truncated });
    for (const e of after(name, from.position)) send(stream, e);
  }

  function write(stream: OpenStream, method: string, params: Record<string, unknown>): void {
    if (stream.frozen || stream.res.writableEnded) return;
    stream.res.write(
      formatSseEvent({
        data: JSON.stringify({ jsonrpc: '2.0', method, params: { ...params, _meta: { [SUB_META]: stream.id } } }),
      }),
    );
  }

  function send(stream: OpenStream, e: LoggedEvent): void {
    if (stream.frozen) return;
    write(stream, 'notifications/events/event', occurrence(e, stream.name));
    stream.position = e.seq;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const body = JSON.parse(await readBody(req)) as { id?: unknown; method?: string; params?: Record<string, unknown> };
    const method = body.method ?? '';
    const params = body.params ?? {};
    requests.push({ method, params });
    if (body.id === undefined) {
      res.writeHead(202).end();
      return;
    }
    if (method === 'events/poll' && limited > 0) {
      limited--;
      res.writeHead(429, { 'retry-after': '1' }).end();
      return;
    }
    if (method === 'events/stream' && types.some((t) => t.name === params['name']))
      return openStream(body.id, params, res);
    let outcome = answer(method, params);
    if (method === 'events/subscribe' && !outcome.error) outcome = (await subscribe(params)) as typeof outcome;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...outcome }));
  }

  async function listen(port: number): Promise<Listening> {
    const http = createServer((req, res) => {
      handle(req, res).catch(() => res.destroy());
    });
    return listenOnLoopback(http, port);
  }

  let listening = await listen(0);
  const port = listening.port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    deliveries,
    emit(name, data = {}) {
      const e: LoggedEvent = {
        seq: log.length + 1,
        eventId: `evt_${log.length + 1}`,
        name,
        timestamp: new Date().toISOString(),
        data: { n: log.length + 1, ...data },
      };
      log.push(e);
      for (const stream of streams) if (stream.name === name) send(stream, e);
      for (const subscription of webhooks.values()) if (subscription.name === name) void deliver(subscription, e);
      return e;
    },
    count: (method) => requests.filter((r) => r.method === method).length,
    openStreams: () => [...streams].filter((s) => !s.frozen).length,
    webhooks: () => webhooks.size,
    freezeStreams() {
      for (const stream of streams) stream.frozen = true;
    },
    dropStreams() {
      for (const stream of streams) stream.res.destroy();
    },
    truncateNext() {
      truncate = true;
    },
    rateLimit(times) {
      limited = times;
    },
    async restart({ forget = true } = {}) {
      for (const stream of streams) clearInterval(stream.heartbeat);
      await listening.close();
      if (forget) webhooks = new Map();
      listening = await listen(port);
    },
    async close() {
      for (const stream of streams) clearInterval(stream.heartbeat);
      await listening.close();
    },
  };
}
