/**
 * What the page shows of one server (a row), built from its `status()` and what the dashboard
 * heard of it: when it entered its state, when its last error came. Only secret-free fields of
 * the status are copied (never the session id, never config: URLs, headers and `${VAR}` values
 * stay out); the status itself already redacts errors and stderr lines.
 */
import type { Era } from '../../machines/connection.types.js';

/** The fields of a server's status the dashboard reads (src/server-status.ts). */
export interface StatusView {
  state: string;
  states?: Record<string, string> | undefined;
  transport: string | undefined;
  protocolVersion: string | undefined;
  era?: Era | undefined;
  serverInfo: { name: string; version: string } | undefined;
  restarts: number;
  lastError: string | undefined;
  nextAttemptAt?: number | undefined;
  keepalive: { lastRttMs: number | undefined; missed: number };
  requests: { inFlight: number; waiting: number };
  pid?: number | undefined;
  stderrTail?: string[] | undefined;
}

export interface Row {
  name: string;
  configured: 'enabled' | 'disabled';
  state: string;
  /** The connection's full state path and its machine children's. */
  states: Record<string, string> | undefined;
  era: string | undefined;
  transport: string | undefined;
  protocolVersion: string | undefined;
  serverInfo: string | undefined;
  /** The last error in plain words, and since when (epoch ms; undefined when it came before the dashboard). */
  why: string | undefined;
  whyAt: number | undefined;
  /** When the current state was entered, as far as the dashboard saw. */
  since: number | undefined;
  nextAttemptAt: number | undefined;
  restarts: number;
  rttMs: number | undefined;
  missed: number;
  inFlight: number;
  held: number;
  pid: number | undefined;
  stderr: string[] | undefined;
}

/** What the dashboard remembers of a server between its statuses. */
export interface Seen {
  since?: number | undefined;
  error?: string | undefined;
  errorAt?: number | undefined;
  /** A row was built before: an error new since then is dated now (one already there has no known age). */
  known?: boolean;
}

const STDERR_LINES = 20;
const TEXT_LIMIT = 500;

function clip(text: string): string {
  return text.length > TEXT_LIMIT ? `${text.slice(0, TEXT_LIMIT)}…` : text;
}

function withoutName(text: string, name: string): string {
  return text.startsWith(`[${name}] `) ? text.slice(name.length + 3) : text;
}

export function rowOf(name: string, status: StatusView, seen: Seen, now: number): Row {
  // The row names its server: an error's own `[name] ` prefix would repeat it in every row's why.
  const why = status.lastError === undefined ? undefined : clip(withoutName(status.lastError, name));
  if (why !== undefined && seen.error !== why) {
    seen.error = why;
    seen.errorAt = seen.known ? now : undefined;
  }
  seen.known = true;
  return {
    name,
    configured: status.state === 'disabled' ? 'disabled' : 'enabled',
    state: status.state,
    states: status.states,
    era: status.era,
    transport: status.transport,
    protocolVersion: status.protocolVersion,
    serverInfo: status.serverInfo ? clip(`${status.serverInfo.name} ${status.serverInfo.version}`) : undefined,
    why,
    whyAt: why === undefined ? undefined : seen.errorAt,
    since: seen.since,
    nextAttemptAt: status.nextAttemptAt,
    restarts: status.restarts,
    rttMs: status.keepalive.lastRttMs,
    missed: status.keepalive.missed,
    inFlight: status.requests.inFlight,
    held: status.requests.waiting,
    pid: status.pid,
    stderr: status.stderrTail?.slice(-STDERR_LINES).map(clip),
  };
}
