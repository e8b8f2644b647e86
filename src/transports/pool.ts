/**
 * One keep-alive undici Pool per origin for messages, shared by every transport that talks to
 * it and closed when the last one lets go. Long-lived SSE streams (resumes, subscriptions, legacy
 * streams) get a second, unbounded pool of their own: each holds a socket for as long as it is
 * open, so in the bounded pool the 129th ready connection could not even send its initialize.
 * The listening GET has a client of its own (`streamClient`).
 *
 * A message's exchange is released when its request settles without an answer (timed out,
 * aborted, failed: see protocol/pending.ts), so a server that trickles its answers holds a
 * socket of the bounded pool no longer than its requests' timeouts. A handshake never queues
 * behind exchanges still in flight: when the message pool has no room it goes through the
 * stream pool (`hasRoom`).
 *
 * Both pools let a socket idle for `IDLE_SOCKET_MS` at most, whatever the server's `Keep-Alive`
 * hint says (undici would follow a hint of up to 10 minutes): a pool hands each request to its
 * first free client, so the sockets in use stay warm while those only a burst needed (a start's
 * hundreds of handshakes at once) close soon after it, sockets and parsers with them, and their
 * clients leave the pool (`droppingIdleClients`).
 */
import { undiciInternals } from './undici-internals.js';
import { buildConnector, Client, Pool } from 'undici';

interface Entry {
  pool: Pool;
  streams: Pool | undefined;
  /** What the origin's own stream clients connect with: one, as a pool's clients share theirs (TLS sessions included). */
  connector: buildConnector.connector | undefined;
  /** The origin parsed once for its stream clients (undici keeps a URL given to it as it is: ~0.2 KB per stream less). */
  url: URL | undefined;
  users: number;
}

const pools = new Map<string, Entry>();

/** Connections of an origin's message pool. */
const MESSAGE_CONNECTIONS = 128;

/**
 * How long a pooled socket may idle, the server's hint included. Long enough for an agent's calls
 * a few seconds apart to reuse their socket; short enough that a start's extra sockets close
 * (300 servers in one supervisor held ~4 KB more each while they stayed: docs/performance.md).
 */
const IDLE_SOCKET_MS = 10_000;

export function acquirePool(origin: string): Pool {
  let entry = pools.get(origin);
  if (!entry) {
    entry = {
      pool: originPool(origin, MESSAGE_CONNECTIONS),
      streams: undefined,
      connector: undefined,
      url: undefined,
      users: 0,
    };
    pools.set(origin, entry);
  }
  entry.users++;
  return entry.pool;
}

/** The stream pool of an origin acquired with `acquirePool`: one socket per open stream, no cap. */
export function streamPool(origin: string): Pool {
  const entry = pools.get(origin);
  if (!entry) throw new Error(`no pool acquired for ${origin}`);
  entry.streams ??= originPool(origin, null);
  return entry.streams;
}

/**
 * An origin's pool (`connections: null` for the stream pool, unbounded) that lets go of a client
 * whose socket closed with nothing queued on it (idle past `IDLE_SOCKET_MS`). undici keeps a
 * pool's clients for good (only `clientTtl` removes them, at a cost per request): a start's burst
 * of handshakes left ~1.5 idle `Client`s per server in a supervisor of 1,000 (~2.5 KB per server
 * with their state). A request that finds no free client makes a new one, as it would open a new
 * socket anyway. Socket events only: nothing per request.
 */
function originPool(origin: string, connections: number | null): Pool {
  const dropIdle = (client: Client) => {
    if (undiciInternals.queued(client) !== 0 || pool.closed || pool.destroyed) return;
    // Taken out of the list as undici does on a connection error: its `kRemoveClient` (clientTtl's
    // path) would also mark the pool busy while a free client is left, sending handshakes to the stream pool.
    const clients = undiciInternals.clients(pool);
    const at = clients ? clients.indexOf(client) : -1;
    if (!clients || at === -1) return;
    clients.splice(at, 1);
    client.close().catch(() => {});
  };
  const pool: Pool = new Pool(origin, {
    connections,
    pipelining: 1,
    keepAliveTimeout: IDLE_SOCKET_MS,
    keepAliveMaxTimeout: IDLE_SOCKET_MS,
    // Long-lived SSE bodies must not be cut by undici's default 300 s body timeout;
    // every request sets its own timeouts.
    bodyTimeout: 0,
    // Called by the pool for its clients, so never before `pool` is set.
    ...(undiciInternals.dropsIdleClients && {
      factory: (url: URL, options: object) => {
        const client = new Client(url, options);
        client.on('disconnect', () => dropIdle(client));
        return client;
      },
    }),
  });
  return pool;
}

/** What undici would build per client when not given (two objects per stream): no stream opens a WebSocket or an EventSource. */
const NO_WEB_SOCKET = Object.freeze({});
const NO_EVENT_SOURCE = Object.freeze({});

/**
 * A Client of its own for one long-lived stream (the listening GET): closed with the stream.
 * Not the stream pool, for two reasons: undici opens a new connection for a client whose running
 * request was aborted (nodejs/undici#5845: the aborted request is counted as pending again), so
 * every cancelled GET stream left an idle socket behind (10,000 connects at a `stop()` of 10,000
 * servers); and a pool looks through all its clients for a free one on every request, O(N) per
 * GET with N streams open.
 */
export function streamClient(origin: string): Client {
  const entry = pools.get(origin);
  const connect = entry ? (entry.connector ??= buildConnector({})) : undefined;
  const url = entry ? (entry.url ??= new URL(origin)) : origin;
  return new Client(url, {
    pipelining: 1,
    keepAliveTimeout: 30_000,
    bodyTimeout: 0,
    webSocket: NO_WEB_SOCKET,
    eventSource: NO_EVENT_SOURCE,
    ...(connect && { connect }),
  });
}

/**
 * Whether a request sent now starts at once: a connection of the pool is free (or can still be
 * opened). Asked twice per handshake (a start of 10,000 servers: 20,000 times), not for every call.
 */
export function hasRoom(pool: Pool): boolean {
  // undici's busy flag (set when a request found no free connection, cleared when one drains): O(1);
  // without it, `pool.stats` counts the exchanges (every connection walked five times over).
  const busy = undiciInternals.busy(pool);
  if (busy !== undefined) return !busy;
  const { running, pending } = pool.stats;
  return running + pending < MESSAGE_CONNECTIONS;
}

export async function releasePool(origin: string): Promise<void> {
  const entry = pools.get(origin);
  if (!entry) return;
  entry.users--;
  if (entry.users > 0) return;
  pools.delete(origin);
  await Promise.all([entry.pool.destroy().catch(() => {}), entry.streams?.destroy().catch(() => {})]);
}
