/**
 * What the connection actor looks like from its runtime: its state, session and last error for
 * status(), the keepalive child's counts, and transition events. Read-only: nothing is started
 * here. Every text that leaves the runtime passes `redact()`.
 */
import type { ActorRefFrom, SnapshotFrom } from 'xstate';
import type { connectionMachine, FactOf, SessionInfo } from '../../machines/connection.machine.js';
import { secretSources } from '../config/server-config.js';
import { Emitter } from '../core/emitter.js';
import { observeMove } from '../observe/telemetry/server-telemetry.js';
import { redact, secretsOf, type Secrets } from '../core/redact.js';
import type { ConnectionState, RuntimeEvents } from './events.js';
import { factsOfMove } from './lifecycle-facts.js';
import { TransportOwner } from './transport-owner.js';

export type ConnectionRef = ActorRefFrom<typeof connectionMachine>;
export type ConnectionSnapshot = SnapshotFrom<typeof connectionMachine>;

export abstract class ConnectionView extends TransportOwner {
  readonly events = new Emitter<RuntimeEvents>();
  /** The actor system the connection actor runs in (set by the supervisor). */
  system: { get(systemId: string): unknown } | undefined;
  /** When a failed server is tried again (epoch ms), for status(). */
  nextAttemptAt: number | undefined;
  /** The last state reported in a transition event (only for reporting). */
  protected reported: ConnectionState | null = null;
  /** Set when the connection actor threw (a bug). */
  protected crashError: string | undefined;
  /** Built on first use (an error or a status), not per idle server. */
  private secrets: Secrets | undefined;

  snapshot(): ConnectionSnapshot | undefined {
    return (this.system?.get(this.name) as ConnectionRef | undefined)?.getSnapshot();
  }

  state(): ConnectionState | 'stopped' {
    const snapshot = this.snapshot();
    if (!snapshot) return this.reported ?? 'stopped';
    if (snapshot.status === 'done') return 'closed';
    if (snapshot.status === 'error') return 'failed';
    const value = snapshot.value;
    return (typeof value === 'string' ? value : Object.keys(value)[0]) as ConnectionState;
  }

  session(): SessionInfo | undefined {
    return this.snapshot()?.context.session;
  }

  lastError(): string | undefined {
    return this.redact(this.snapshot()?.context.lastError ?? this.crashError);
  }

  /** Last keepalive round trip and misses in a row: the keepalive child's own count. */
  keepalive(): { lastRttMs: number | undefined; missed: number } {
    const child = this.snapshot()?.children.keepalive?.getSnapshot();
    return { lastRttMs: child?.context.lastRttMs, missed: child?.context.missed ?? 0 };
  }

  /** The machine's `state changed` fact, as a transition event (observation only: nothing is started here). */
  onTransition(change: FactOf<'state changed'>): void {
    const to = change.to as ConnectionState;
    const from = this.reported;
    if (to === from) return;
    this.reported = to;
    // A revival, when one is scheduled, is told right after the move into `failed`.
    this.nextAttemptAt = undefined;
    const transition = {
      server: this.name,
      from,
      to,
      cause: change.cause,
      error: this.redact(change.error),
      at: Date.now(),
    };
    this.events.emit('transition', transition);
    observeMove(this, transition, factsOfMove(this));
  }

  /** Text that leaves the runtime (transition errors, status) passes the one redaction rule. */
  redact<T extends string | undefined>(text: T): T {
    if (text === undefined) return text;
    this.secrets ??= secretsOf([secretSources(this.config)]);
    return redact(text, this.secrets) as T;
  }
}
