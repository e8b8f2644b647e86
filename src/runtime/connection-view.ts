/**
 * What the connection actor looks like from its runtime: its state, session and last error for
 * status(), the keepalive child's counts, and transition events. Read-only: nothing is started
 * here. Every text that leaves the runtime passes `redact()` (server-context.ts).
 */
import type { AnyEventObject, SnapshotFrom } from 'xstate';
import type { keepaliveMachine } from '../../machines/keepalive.machine.js';
import { describeCause, eventError, topLevelState } from '../../machines/transition-cause.js';
import { describeError } from '../errors.js';
import { observeTransition } from '../observe/telemetry/server-telemetry.js';
import type { ConnectionState } from './events.js';
import type { ServerContext } from './server-context.js';

type KeepaliveSnapshot = SnapshotFrom<typeof keepaliveMachine>;

export class ConnectionView {
  /** When a failed server is tried again (epoch ms), for status(). */
  nextAttemptAt: number | undefined = undefined;
  /** The last state reported in a transition event (only for reporting). */
  private reported: ConnectionState | null = null;
  /** Set when the connection actor threw (a bug). */
  private crashError: string | undefined = undefined;

  constructor(private readonly context: ServerContext) {}

  state(): ConnectionState | 'stopped' {
    const snapshot = this.context.snapshot();
    if (!snapshot) return this.reported ?? 'stopped';
    if (snapshot.status === 'done') return 'closed';
    if (snapshot.status === 'error') return 'failed';
    return topLevelState(snapshot.value) as ConnectionState;
  }

  lastError(): string | undefined {
    return this.context.redact(this.context.snapshot()?.context.lastError ?? this.crashError);
  }

  /** Last keepalive round trip and misses in a row: the keepalive child's own count. */
  keepalive(): { lastRttMs: number | undefined; missed: number } {
    const child = this.context.snapshot()?.children.keepalive?.getSnapshot() as KeepaliveSnapshot | undefined;
    return { lastRttMs: child?.context.lastRttMs, missed: child?.context.missed ?? 0 };
  }

  /** Reports a change of top-level state as a transition event (observation only: nothing is started here). */
  onTransition(value: unknown, event: AnyEventObject): void {
    const to = topLevelState(value) as ConnectionState;
    const from = this.reported;
    if (to === from) return;
    this.reported = to;
    if (to !== 'failed') this.nextAttemptAt = undefined;
    const error = this.context.redact(eventError(event));
    const transition = {
      server: this.context.name,
      from,
      to,
      cause: describeCause(event, value),
      error,
      at: Date.now(),
    };
    this.context.events.emit('transition', transition);
    observeTransition(this.context.observed, transition);
  }

  /** The connection actor threw (a bug): reported as a transition to `failed`; returns the redacted reason. */
  onCrash(error: unknown): string {
    const from = this.reported;
    this.crashError = `the connection actor crashed: ${describeError(error)}`;
    this.reported = 'failed';
    const text = this.context.redact(this.crashError);
    const transition = {
      server: this.context.name,
      from,
      to: 'failed' as const,
      cause: 'crashed',
      error: text,
      at: Date.now(),
    };
    this.context.events.emit('transition', transition);
    observeTransition(this.context.observed, transition);
    return text;
  }
}
