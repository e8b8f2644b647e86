/**
 * One server's part in its origin's turns (origin-turns.ts): the machine's `wait for origin`
 * actor and `ask about waiting requests` action, the REQUESTS_WAITING it is told when requests
 * start to wait, the first attempt's turn (`beforeAttempt`), and the verdicts its moves give the origin (read from the machine's facts: a
 * session started, the connection went down, it gave up or closed). A stdio server has no
 * origin: its turn is always now. And its origin's liveness: every answer the server gets stamps
 * the origin's record (a stdio server's own), which the keepalive reads (`proof: 'origin'`).
 */
import { TransportError } from '../../core/errors.js';
import type { ConnectionFact } from '../../../machines/connection.facts.js';
import { statusOf } from '../../../machines/connection.types.js';
import { DEFAULT_WAITING_RECONNECT_MS, type BackoffPolicy } from '../../../machines/restart-policy.js';
import { originLiveness, type OriginLiveness } from '../../transports/origin-liveness.js';
import type { ReadOnlyContext } from '../context/server-context.js';
import { originKey, originTurns, type OriginMember, type OriginTurns } from './origin-turns.js';

export class OriginMembership implements OriginMember {
  readonly origin: string | undefined;
  readonly backoff: BackoffPolicy;
  readonly waitingReconnectMs: number;
  /** When the origin last answered: shared by its servers, stamped by each one's answers. */
  readonly liveness: OriginLiveness;
  /** REQUESTS_WAITING was told since the gate last emptied. */
  private told = false;
  /** The first attempt was made: later ones come after a turn (`waiting for origin`) or a `reconnect()`. */
  private attempted = false;
  /** The last attempt failed with an HTTP answer: the origin is up, the failure is this server's own. */
  private answered = false;

  constructor(
    private readonly context: ReadOnlyContext,
    private readonly turns: OriginTurns = originTurns,
  ) {
    const config = context.config;
    this.origin = config.kind === 'url' ? originKey(config.url) : undefined;
    this.backoff = config.restart.backoff;
    this.waitingReconnectMs = config.restart.waitingReconnectMs ?? DEFAULT_WAITING_RECONNECT_MS;
    context.pending.answers = this.liveness = originLiveness(this.origin);
  }

  hasWaitingRequests(): boolean {
    return this.context.gate.waiting > 0;
  }

  /** The machine's `wait for origin`: resolves when this server may try to connect. */
  turn(): Promise<void> {
    return this.origin === undefined ? Promise.resolve() : this.turns.turn(this.origin, this);
  }

  /**
   * `connecting`: the connection's first attempt takes its origin's turn (undefined: go now), so a
   * cold start of many servers on an origin that is down knocks once per slot. Later attempts
   * come with a turn already (or from `reconnect()`, which goes at once): one left waiting is dropped.
   */
  private beforeAttempt(): Promise<void> | undefined {
    this.answered = false;
    if (this.origin === undefined) return undefined;
    if (this.attempted) {
      this.turns.stopWaiting(this.origin, this);
      return undefined;
    }
    this.attempted = true;
    const origin = this.origin;
    return this.turns.firstTurn(origin, this)?.catch(() => {
      throw new TransportError(
        `${origin} could not be reached: another connection's attempt to it just failed (not attempted; waiting for the origin's turn)`,
        undefined,
        { server: this.context.name },
      );
    });
  }

  /** `connecting`: the attempt opens its transport once its turn comes (the first attempt waits for it). */
  attempt<T>(open: () => Promise<T>): Promise<T> {
    const turn = this.beforeAttempt();
    return this.noting(turn ? turn.then(open) : open());
  }

  /** A step of an attempt (transport, discover, initialize): a failure with an HTTP status says the origin answered. */
  noting<T>(step: Promise<T>): Promise<T> {
    if (this.origin === undefined) return step;
    return step.catch((error: unknown) => {
      this.answered = statusOf(error) !== undefined;
      throw error;
    });
  }

  /** The machine's `ask about waiting requests` (on entering a backoff). */
  ask(): void {
    if (this.hasWaitingRequests()) this.tellWaiting();
  }

  /** A request started to wait (held, or parked for replay): told once until the gate empties. */
  onWaiting(): void {
    // While serving, a parked request is followed by the evidence that takes the connection down.
    if (this.context.gate.phase !== 'holding' || (this.told && this.context.gate.waiting > 1)) return;
    this.tellWaiting();
  }

  /** The gate emptied (released, or everything failed). */
  onDrained(): void {
    this.told = false;
  }

  /** A move's facts: the verdict of an attempt for the origin. */
  onMove(facts: readonly ConnectionFact[]): void {
    const origin = this.origin;
    if (origin === undefined) return;
    for (const fact of facts) {
      if (fact.type === 'session started') this.turns.succeeded(origin);
      else if (fact.type === 'connection down') {
        // An HTTP answer (a 404, a 500) proves the origin up: the others need not wait for it.
        if (this.answered) this.turns.succeeded(origin);
        else this.turns.failed(origin, this);
        this.answered = false;
      } else if (LEAVING.has(fact.type)) this.turns.leave(origin, this);
    }
  }

  private tellWaiting(): void {
    this.told = true;
    this.context.tell({ type: 'REQUESTS_WAITING' });
    if (this.origin !== undefined) this.turns.hurry(this.origin, this);
  }
}

/** Facts after which the connection makes no attempt of its own turn. */
const LEAVING = new Set<ConnectionFact['type']>(['gave up', 'close requested', 'closed', 'authorization required']);
