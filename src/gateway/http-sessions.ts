/**
 * The 2025 host sessions of the HTTP service: opened by `initialize`, ended by the host's DELETE
 * or after `sessionIdleMs` unused, and kept in the store meanwhile (kept-sessions.ts). A session
 * id this process does not hold is taken up: restored from its record, or — found nowhere (a
 * store wiped, a memory store) — adopted, re-created from the request with no client
 * capabilities, so that a host whose gateway restarted never strands (real hosts do not
 * initialize again after a 404). `strictSessions` answers 404 instead, as the spec says.
 *
 * A session is set up again through the SDK's own transport and server: the host's `initialize`
 * and `notifications/initialized` are replayed from the record, then its log level and its
 * resource subscriptions (the upstream subscriptions of a new process are made again too).
 */
import { randomUUID } from 'node:crypto';
import { metrics, type Counter } from '@opentelemetry/api';
import {
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  LATEST_PROTOCOL_VERSION,
  type ClientCapabilities,
  type Implementation,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
  type Server,
} from '@modelcontextprotocol/server';
import { ConfigError, describeError } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import type { Logger } from '../observe/logger.js';
import { digestOf } from '../store/state-keys.js';
import { BoundedEventStore } from './event-store.js';
import type { Gateway } from './gateway.js';
import { adoptableSessionId, KeptSessions, type KeptSession } from './kept-sessions.js';
import { RETRY_MS, SessionTransport } from './session-transport.js';
import type { DirectPath } from './direct-path.js';
import { takesRequests } from './sessions.js';

export interface HttpSessionsOptions {
  /** A session unused this long is closed and forgotten (0: never). */
  idleMs: number;
  /** An unknown session id found nowhere is answered 404 instead of adopted. */
  strict: boolean;
  directPath: DirectPath | undefined;
}

/** How a session came to be served by this process; how it stopped being served. */
type Opening = 'opened' | 'restored' | 'adopted';
type Ending = 'ended' | 'expired' | 'released';

/** The session a log line is about: a digest, never the id (a session id is a credential). */
export const sessionTag = (sessionId: string): string => digestOf(sessionId).slice(0, 10);

export class HttpSessions {
  private readonly live = new Map<string, SessionTransport>();
  private readonly takingUp = new Map<string, Promise<SessionTransport | undefined>>();
  private readonly kept: KeptSessions;
  private readonly sweep: NodeJS.Timeout | undefined;
  private readonly logger: Logger;
  /** Host-session events by kind (a no-op until the application registers a meter provider). */
  private readonly events: Counter;
  private closing = false;

  constructor(
    private readonly gateway: Gateway,
    private readonly options: HttpSessionsOptions,
  ) {
    if (!(Number.isFinite(options.idleMs) && options.idleMs >= 0))
      throw new ConfigError(
        `invalid gateway option: sessionIdleMs: expected milliseconds >= 0 (0: never), not ${options.idleMs}`,
        [{ path: 'sessionIdleMs', message: 'expected a number of milliseconds >= 0' }],
      );
    this.logger = gateway.logger;
    this.kept = new KeptSessions(gateway.sessionStore, options.idleMs, (error) =>
      this.logger.warn(
        { event: 'store error', store: gateway.sessionStore.name, error: describeError(error) },
        `host sessions: the store (${gateway.sessionStore.name}) failed: ${describeError(error)}`,
      ),
    );
    this.sweep = this.expireIdle();
    const meter = metrics.getMeter('mcp-supervisor', VERSION);
    this.events = meter.createCounter('mcp_supervisor.gateway.host_session.events', {
      description: 'host-session events of the gateway: opened, restored, adopted, ended, expired',
    });
    meter
      .createObservableGauge('mcp_supervisor.gateway.host_sessions', {
        description: '2025-era host sessions this gateway process serves now',
      })
      .addCallback((result) => result.observe(this.live.size));
  }

  get(sessionId: string): SessionTransport | undefined {
    return this.live.get(sessionId);
  }

  get size(): number {
    return this.live.size;
  }

  /**
   * A new session for the host's `initialize`. Its record is written before the host gets the
   * answer: its next request may reach another replica.
   */
  async open(initialize: unknown): Promise<SessionTransport> {
    return this.create(randomUUID, 'opened', undefined, recordOfInitialize(initialize));
  }

  /**
   * A session id this process does not hold: restored from the store, else adopted (unless
   * strict), else undefined (404). Concurrent requests of one session wait for one taking up.
   */
  takeUp(sessionId: string, version: string | null): Promise<SessionTransport | undefined> {
    let taking = this.takingUp.get(sessionId);
    if (!taking) {
      taking = this.restore(sessionId, version).finally(() => this.takingUp.delete(sessionId));
      this.takingUp.set(sessionId, taking);
    }
    return taking;
  }

  /** The host's DELETE of a session this process does not hold: gone from the store; false when it was nowhere. */
  async endElsewhere(sessionId: string): Promise<boolean> {
    const record = await this.kept.find(sessionId).catch(() => undefined);
    if (!record) return false;
    await this.kept.forget(sessionId);
    this.said('ended', sessionId);
    return true;
  }

  /** The host used the session: its record lives on (written again when due). */
  used(transport: SessionTransport, now: number): void {
    const id = transport.sessionId;
    if (
      id !== undefined &&
      transport.record &&
      transport.ending === undefined &&
      !this.closing &&
      this.kept.due(id, now)
    )
      void this.kept.keep(id, transport.record);
  }

  private async restore(sessionId: string, version: string | null): Promise<SessionTransport | undefined> {
    let record: KeptSession | undefined;
    try {
      record = await this.kept.find(sessionId);
    } catch (error) {
      this.logger.warn(
        { event: 'store error', store: this.kept.store.name, error: describeError(error) },
        `host sessions: the store (${this.kept.store.name}) could not be read: ${describeError(error)}`,
      );
    }
    if (this.closing) return undefined;
    if (record) return this.create(() => sessionId, 'restored', record);
    if (this.options.strict || !adoptableSessionId(sessionId)) return undefined;
    const legacyVersion =
      version !== null && version < '2026' && SUPPORTED_PROTOCOL_VERSIONS.includes(version)
        ? version
        : DEFAULT_NEGOTIATED_PROTOCOL_VERSION;
    return this.create(() => sessionId, 'adopted', {
      protocolVersion: legacyVersion,
      clientInfo: { name: 'unknown (adopted session)', version: '0' },
      capabilities: {},
      subscriptions: [],
      adopted: true,
    });
  }

  /** A session of the SDK's server: a new one (`declared`: what its initialize said), or one set up again from `record`. */
  private async create(
    newId: () => string,
    opening: Opening,
    record?: KeptSession,
    declared?: KeptSession,
  ): Promise<SessionTransport> {
    const { gateway, options } = this;
    const server = gateway.createServer();
    const events = new BoundedEventStore();
    const transport: SessionTransport = new SessionTransport(
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: newId,
        eventStore: events,
        retryInterval: RETRY_MS,
        onsessioninitialized: async (sessionId) => {
          this.live.set(sessionId, transport);
          if (!declared) return;
          transport.record = declared;
          await this.kept.keep(sessionId, declared);
          this.said('opened', sessionId);
        },
        // The host's DELETE is answered once the record is gone.
        onsessionclosed: (sessionId) => {
          transport.ending = 'ended';
          return this.kept.forget(sessionId);
        },
      }),
      events,
    );
    if (options.directPath) {
      const direct = options.directPath;
      transport.serveDirect = (message, signal, notify) => direct.legacy(message, server, signal, notify);
      transport.quiet = () => !takesRequests(server);
    }
    transport.onclose = () => this.closed(transport, server);
    transport.onUsed = (now) => this.used(transport, now);
    transport.record = record;
    // The host's handshake done: what it declared is kept, and kept again whenever its facts change.
    const keep = () => {
      const id = transport.sessionId;
      if (id === undefined || this.closing) return;
      transport.record = recordOf(server, gateway, transport.record?.adopted);
      void this.kept.keep(id, transport.record);
    };
    server.oninitialized = keep;
    gateway.sessions.watchFacts(server, keep);
    await server.connect(transport);
    gateway.sessions.add(server);
    if (record) {
      await replay(transport, record);
      this.said(opening, transport.sessionId!, record.adopted ? undefined : record.clientInfo.name);
    }
    return transport;
  }

  private closed(transport: SessionTransport, server: Server): void {
    const id = transport.sessionId;
    this.gateway.sessions.remove(server);
    if (id === undefined) return;
    if (this.live.get(id) === transport) this.live.delete(id);
    const ending = transport.ending ?? 'released';
    if (ending === 'expired') void this.kept.forget(id, true);
    else if (ending === 'released') this.kept.release(id);
    if (ending !== 'released') this.said(ending, id);
  }

  /** One line per event of a host session, naming it by a digest. */
  private said(what: Opening | Ending, sessionId: string, host?: string): void {
    this.events.add(1, { 'mcp_supervisor.event': what });
    const session = sessionTag(sessionId);
    // The host chose its name: no line breaks or escapes of its own in the operator's log.
    const client = host === undefined ? undefined : [...host.slice(0, 80)].map(printable).join('');
    this.logger.info(
      { event: `host session ${what}`, session, ...(client === undefined ? {} : { client }) },
      `host session ${session} ${what}${client === undefined ? '' : ` (${client})`}`,
    );
  }

  /** Closes the sessions nobody used for `idleMs` (none of their requests open, a GET stream included); keeps the records of busy ones alive. */
  private expireIdle(): NodeJS.Timeout | undefined {
    const { idleMs } = this.options;
    if (idleMs === 0) return undefined;
    const sweep = setInterval(
      () => {
        const now = Date.now();
        const before = now - idleMs;
        for (const session of this.live.values()) {
          if (session.open > 0) this.used(session, now);
          else if (session.lastSeen <= before) {
            session.ending = 'expired';
            void session.close().catch(() => {});
          }
        }
      },
      Math.min(Math.max(idleMs / 4, 10), 60_000),
    );
    sweep.unref();
    return sweep;
  }

  /** Draining: each session's GET stream ends, so that its host opens it again (on another process). */
  endStreams(): void {
    for (const transport of this.live.values()) transport.web.closeStandaloneSSEStream();
  }

  /** The service stops: sessions close here, their records stay for the next process. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.sweep);
    await Promise.allSettled([...this.takingUp.values()]);
    await Promise.allSettled([...this.live.values()].map((transport) => transport.close()));
    this.live.clear();
  }
}

/** What a host's `initialize` declares, as the SDK's server will take it (the record is written again once it did). */
function recordOfInitialize(body: unknown): KeptSession {
  const message = (Array.isArray(body) ? body[0] : body) as {
    params?: { protocolVersion?: unknown; capabilities?: ClientCapabilities; clientInfo?: Implementation };
  };
  const requested = message.params?.protocolVersion;
  return {
    protocolVersion:
      typeof requested === 'string' && requested < '2026' && SUPPORTED_PROTOCOL_VERSIONS.includes(requested)
        ? requested
        : LATEST_PROTOCOL_VERSION,
    clientInfo: message.params?.clientInfo ?? { name: 'unknown', version: '0' },
    capabilities: message.params?.capabilities ?? {},
    subscriptions: [],
  };
}

/** What the host declared, as the session's server read it, with the facts it set since. */
function recordOf(server: Server, gateway: Gateway, adopted: boolean | undefined): KeptSession {
  const facts = gateway.sessions.factsOf(server);
  return {
    protocolVersion: server.getNegotiatedProtocolVersion() ?? DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
    clientInfo: server.getClientVersion() ?? { name: 'unknown', version: '0' },
    capabilities: server.getClientCapabilities() ?? {},
    ...(facts.level === undefined ? {} : { level: facts.level }),
    subscriptions: [...facts.subscriptions],
    ...(adopted ? { adopted } : {}),
  };
}

const REPLAY_ID = 'mcp-supervisor-restore';

/**
 * The host's handshake and later facts, replayed through the session's own transport (the SDK's
 * server negotiates as it did the first time). The subscriptions go on in the background: each
 * waits for its upstream server to serve.
 */
async function replay(transport: SessionTransport, record: KeptSession): Promise<void> {
  const { protocolVersion, clientInfo, capabilities } = record;
  await post(transport, undefined, {
    jsonrpc: '2.0',
    id: REPLAY_ID,
    method: 'initialize',
    params: { protocolVersion, capabilities, clientInfo },
  });
  const version = record.protocolVersion;
  await post(transport, version, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (record.level !== undefined)
    await post(transport, version, {
      jsonrpc: '2.0',
      id: `${REPLAY_ID}-level`,
      method: 'logging/setLevel',
      params: { level: record.level },
    });
  record.subscriptions.forEach(
    (uri, index) =>
      void post(transport, version, {
        jsonrpc: '2.0',
        id: `${REPLAY_ID}-subscribe-${index}`,
        method: 'resources/subscribe',
        params: { uri },
      }).catch(() => {}),
  );
}

/** One message posted to the session's web transport as a host would, its answer read to the end. */
async function post(transport: SessionTransport, version: string | undefined, message: object): Promise<void> {
  const headers: Record<string, string> = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
  };
  if (version !== undefined) {
    headers['mcp-session-id'] = transport.sessionId!;
    headers['mcp-protocol-version'] = version;
  }
  const request = new Request('http://localhost/mcp', { method: 'POST', headers });
  const response = await transport.web.handleRequest(request, { parsedBody: message });
  await response.text();
}

/** A character of a host-chosen name as the log shows it: control characters as `?`. */
function printable(char: string): string {
  const code = char.charCodeAt(0);
  return code < 0x20 || code === 0x7f ? '?' : char;
}
