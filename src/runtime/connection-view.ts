/**
 * What the connection actor looks like from its runtime: its state, session and last error for
 * status(), the keepalive child's counts, transition events, and the outcomes of its attempts
 * (what `start()`, `connect()` and `reconnect()` wait for). Read-only: nothing is started
 * here. Every text that leaves the runtime passes `redact()` (server-context.ts).
 */
import type { FactOf } from '../../machines/connection.machine.js';
import { describeError } from '../core/errors.js';
import { observeMove } from '../observe/telemetry/server-telemetry.js';
import type { ConnectionState } from './context/events.js';
import { factsOfMove } from './lifecycle-facts.js';
import type { ReadOnlyContext } from './context/server-context.js';

/** Each machine's state path (`ready.serving`): `connection`, then its machine children by id (`keepalive`, `listener`, `sse-fallback`). */
export type MachineStates = Record<string, string>;

/**
 * Paths built from nested state values, one string each: a status row keeps its paths for as long
 * as it is current, and 10,000 rows saying `ready.serving` hold one string, not 10,000. Bounded by
 * the machines' states.
 */
const PATHS = new Map<string, string>();

/** A state value as one path: `ready.serving`; parallel regions joined by ` | `. */
function statePath(value: unknown): string {
  if (typeof value === 'string') return value;
  const path = nestedPath(value);
  const known = PATHS.get(path);
  if (known !== undefined) return known;
  PATHS.set(path, path);
  return path;
}

function nestedPath(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return '';
  return Object.entries(value)
    .map(([key, inner]) => {
      const rest = nestedPath(inner);
      return rest ? `${key}.${rest}` : key;
    })
    .join(' | ');
}

/** Each machine's state path. */
function deriveStates(snapshot: { value: unknown; children: object }): MachineStates {
  const states: MachineStates = { connection: statePath(snapshot.value) };
  const refs = snapshot.children as Record<string, { getSnapshot(): unknown } | undefined>;
  for (const id in refs) {
    const child = refs[id]?.getSnapshot() as { value?: unknown } | undefined;
    if (child?.value !== undefined) states[id] = statePath(child.value);
  }
  return states;
}

/** An actor whose snapshots can be observed. */
interface Watchable {
  getSnapshot(): unknown;
  subscribe(next: () => void): unknown;
}

const isStopped = (ref: Watchable) => (ref.getSnapshot() as { status?: string }).status === 'stopped';

/** Shared by every view not yet read by a status (no array per server). */
const NONE_OBSERVED: readonly Watchable[] = Object.freeze([]);

export class ConnectionView {
  /** When a failed server is tried again (epoch ms), for status(). */
  nextAttemptAt: number | undefined = undefined;
  /** The last state reported in a transition event (only for reporting). */
  private reported: ConnectionState | null = null;
  /** Set when the connection actor threw (a bug). */
  private crashError: string | undefined = undefined;
  /** Resolves at the first outcome of the first attempt: serving, or down, failed, closed. */
  readonly firstOutcome: Promise<void>;
  private settleFirstOutcome!: () => void;
  /** Waiting for the outcome of the next attempt (`handle.reconnect()`). */
  private attemptWaiters: (() => void)[] | undefined = undefined;
  /** What `sup.status()` said last (server-status.ts): kept while it would say the same. */
  lastStatus: unknown = undefined;

  constructor(private readonly context: ReadOnlyContext) {
    this.firstOutcome = new Promise((resolve) => {
      this.settleFirstOutcome = resolve;
    });
  }

  /** An attempt is over (serving, or down, or the actor crashed: a `reconnect()` waiting then must not hang). */
  settleAttempt(): void {
    this.settleFirstOutcome();
    const waiters = this.attemptWaiters;
    this.attemptWaiters = undefined;
    for (const resolve of waiters ?? []) resolve();
  }

  /** Resolves when the next attempt is over. */
  nextAttempt(): Promise<void> {
    return new Promise((resolve) => (this.attemptWaiters ??= []).push(resolve));
  }

  state(): ConnectionState | 'stopped' {
    const snapshot = this.context.snapshot();
    if (!snapshot) return this.reported ?? 'stopped';
    if (snapshot.status === 'done') return 'closed';
    if (snapshot.status === 'error') return 'failed';
    const value = snapshot.value;
    return (typeof value === 'string' ? value : Object.keys(value)[0]) as ConnectionState;
  }

  lastError(): string | undefined {
    return this.context.redact(this.context.snapshot()?.context.lastError ?? this.crashError);
  }

  /** Last keepalive round trip and misses in a row: the keepalive child's own count. */
  keepalive(): { lastRttMs: number | undefined; missed: number } {
    const child = this.context.snapshot()?.children.keepalive?.getSnapshot();
    return { lastRttMs: child?.context.lastRttMs, missed: child?.context.missed ?? 0 };
  }

  /** The connection's full state and each machine child's (a new object each call). */
  states(): MachineStates | undefined {
    const snapshot = this.context.snapshot();
    return snapshot?.status === 'active' ? deriveStates(snapshot) : undefined;
  }

  /** The machine's `state changed` fact, as a transition event (observation only: nothing is started here). */
  onTransition(change: FactOf<'state changed'>): void {
    // A connection actor that replaced the last one is first heard of here (status() looks again).
    this.moved = true;
    const to = change.to as ConnectionState;
    const from = this.reported;
    if (to === from) return;
    this.reported = to;
    // A revival, when one is scheduled, is told right after the move into `failed`.
    this.nextAttemptAt = undefined;
    const transition = {
      server: this.context.name,
      from,
      to,
      cause: change.cause,
      error: this.context.redact(change.error),
      at: Date.now(),
    };
    this.context.events.emit('transition', transition);
    // The runtime (context.observed) is what its connection's facts are kept under (lifecycle-facts.ts).
    observeMove(this.context.observed, transition, factsOfMove(this.context.observed));
  }

  /** The connection actor threw (a bug): remembered for lastError(); returns the redacted reason (the runtime tells the move). */
  onCrash(error: unknown): string {
    this.crashError = `the connection actor crashed: ${describeError(error)}`;
    return this.context.redact(this.crashError);
  }

  /**
   * Watches the server's machines for status(), from its first status on (confirmed()): the
   * connection actor and its machine children by snapshot observers, a new connection actor by
   * its first move (onTransition). While none moved, status() compares only the counters kept
   * outside the machines (a poll of 10,000 servers otherwise reads some 25 objects of each and
   * misses the CPU caches on most). Snapshot observers, not `system.inspect`: an inspection
   * observer makes XState spread every event, action and snapshot (~60 % more per transition).
   */
  watch(): void {
    this.watched = true;
  }

  /**
   * No watched machine moved since confirmed() (false when not watched). The connection's
   * snapshot is compared too: a fact the connection emits is told after its new snapshot is in
   * place but before the observers hear of it. That snapshot is let go at the first move seen
   * (`mark`), so a server nobody polls keeps no old snapshot.
   */
  unchanged(): boolean {
    return this.watched && !this.moved && this.observed[0]?.getSnapshot() === this.seen;
  }

  /** The last status is current: from now on a move of the connection or of a machine child marks it. */
  confirmed(): void {
    if (this.watched) {
      const connection = this.context.system?.get(this.context.name) as Watchable | undefined;
      const seen: Watchable[] = [];
      const snapshot = connection?.getSnapshot() as { status: string; children: object } | undefined;
      if (connection && snapshot?.status === 'active') {
        this.observe(connection, seen);
        const children = snapshot.children as Record<string, Watchable | undefined>;
        for (const id in children) {
          const child = children[id];
          const value = (child?.getSnapshot() as { value?: unknown } | undefined)?.value;
          if (child && value !== undefined) this.observe(child, seen);
        }
      }
      this.observed = seen.length === 0 ? NONE_OBSERVED : seen;
      this.seen = snapshot;
    }
    this.moved = false;
  }

  private observe(ref: Watchable, seen: Watchable[]): void {
    seen.push(ref);
    // Snapshots only (a done one included): an observer object would cost three bound functions.
    if (!this.observed.includes(ref)) ref.subscribe((this.mark ??= () => this.markMoved()));
  }

  private markMoved(): void {
    this.moved = true;
    this.seen = undefined;
    // A child stopped since (a listener whose stream opened) is let go now, not at the next
    // status(): a server nobody polls again would keep its stopped actor (~2.6 KB).
    const observed = this.observed;
    for (let i = 1; i < observed.length; i++)
      if (isStopped(observed[i]!)) {
        this.observed = observed.filter((ref, at) => at === 0 || !isStopped(ref));
        return;
      }
  }

  /** Something status() reads outside the machines changed (its origin keepalive's figures). */
  touch(): void {
    this.moved = true;
  }

  private watched = false;
  private moved = true;
  /** The connection's snapshot as of the last confirmed() (until a move is seen). */
  private seen: unknown = undefined;
  /** The actors observed as of the last confirmed(): the connection first, then its machine children. */
  private observed: readonly Watchable[] = NONE_OBSERVED;
  private mark: (() => void) | undefined = undefined;
}
