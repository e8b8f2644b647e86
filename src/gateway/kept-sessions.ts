/**
 * 2025 host sessions kept in the gateway's store, so that a gateway process that restarted, or
 * another replica, serves a host's session id as if nothing happened. A record holds what the
 * host said once and never says again: the negotiated version, its client info and capabilities,
 * its log level and resource subscriptions. It is keyed by a digest of the session id (whoever
 * reads the store cannot take a session over), written when the session opens or its facts change
 * and again, at most once per quarter of the idle time, while the host keeps using it (the record
 * expires with the session: `sessionIdleMs`). The store is never read on a call's path: only for
 * an id this process does not hold.
 */
import type { ClientCapabilities, Implementation } from '@modelcontextprotocol/server';
import type { LoggingLevel } from '../protocol/results.js';
import { digestOf } from '../store/state-keys.js';
import type { Store } from '../store/types.js';

export interface KeptSession {
  protocolVersion: string;
  clientInfo: Implementation;
  capabilities: ClientCapabilities;
  level?: LoggingLevel | undefined;
  /** The resource URIs the host subscribed to, as it named them. */
  subscriptions: string[];
  /** Re-created from a request whose id was found nowhere: what the host declared is not known. */
  adopted?: boolean | undefined;
}

const keyOf = (sessionId: string) => `mcp-supervisor:gateway-session:${digestOf(sessionId)}`;

/** Whether a host's session id may be adopted: visible ASCII (the spec's alphabet), of a sane length. */
export function adoptableSessionId(id: string): boolean {
  return id.length > 0 && id.length <= 256 && /^[\x21-\x7e]+$/.test(id);
}

export class KeptSessions {
  /** The version this process last wrote per session, and when (a refresh is due a quarter of the idle time later). */
  private readonly written = new Map<string, { version: number; at: number }>();
  /** Each session's writes and its delete, in the order they were made (a late write must not bring back an ended session). */
  private readonly queues = new Map<string, Promise<void>>();

  constructor(
    readonly store: Store,
    /** A record outlives its last use by this long (0: never expires). */
    private readonly idleMs: number,
    /** A store that failed: said, never thrown at a host. */
    private readonly onError: (error: unknown) => void,
  ) {}

  find(sessionId: string): Promise<KeptSession | undefined> {
    return this.store.get<KeptSession>(keyOf(sessionId)).then((entry) => entry?.value);
  }

  /** Writes the record; a write that fails is reported, the session goes on (the promise never rejects). */
  keep(sessionId: string, session: KeptSession): Promise<void> {
    const written = { version: 0, at: Date.now() };
    this.written.set(sessionId, written);
    return this.queued(sessionId, () =>
      this.store.set(keyOf(sessionId), session, this.idleMs > 0 ? { ttlMs: this.idleMs } : {}).then((result) => {
        if (result.ok) written.version = result.version;
      }),
    );
  }

  private queued(sessionId: string, operation: () => Promise<void>): Promise<void> {
    const next = (this.queues.get(sessionId) ?? Promise.resolve()).then(operation).catch(this.onError);
    this.queues.set(sessionId, next);
    void next.then(() => {
      if (this.queues.get(sessionId) === next) this.queues.delete(sessionId);
    });
    return next;
  }

  /** The host used the session: true when its record is due to be written again (its lifetime restarts). */
  due(sessionId: string, now: number): boolean {
    if (this.idleMs === 0) return false;
    const written = this.written.get(sessionId);
    return written === undefined || now - written.at >= this.idleMs / 4;
  }

  /**
   * The session ended. `onlyOurs`: only if nobody wrote the record since this process did (a
   * session left idle here may be in use on another replica).
   */
  forget(sessionId: string, onlyOurs = false): Promise<void> {
    const written = this.written.get(sessionId);
    this.written.delete(sessionId);
    return this.queued(sessionId, async () => {
      if (onlyOurs && !written?.version) return;
      await this.store.delete(keyOf(sessionId), onlyOurs ? { ifVersion: written!.version } : {});
    });
  }

  /** This process no longer holds the session (it closed): the record stays for whoever serves it next. */
  release(sessionId: string): void {
    this.written.delete(sessionId);
  }
}
