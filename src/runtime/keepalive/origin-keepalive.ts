/**
 * One keepalive per origin (`proof: 'origin'`, the default, over HTTP). Request sockets are shared
 * per origin (transports/pool.ts), so the origin's liveness is its servers' liveness: one keepalive
 * machine (machines/keepalive.machine.ts) stands for every ready server of the origin, instead of
 * one actor and one pending delay per server. It skips its probe when the origin answered anything
 * within the interval (transports/origin-liveness.ts), else probes one member (the next in turn,
 * a ping or the cheap list request that member's probe uses); `maxMissed` misses in a row tell every
 * member CONNECTION_LOST, as its own keepalive would have.
 *
 * Members join on entering `ready` and leave on leaving it (machines/connection.keepalive.ts); the
 * last one out stops the actor, so no timer is left. Keepalives are kept per origin and settings, for the
 * whole process (servers of one origin with different intervals keep one keepalive each).
 */
import { assign, createActor, type Actor } from 'xstate';
import {
  connectionLost,
  keepaliveMachine,
  type KeepaliveContext,
  type KeepaliveEvent,
  type KeepaliveReport,
  type KeepaliveSettings,
  type ProbeOutput,
} from '../../../machines/keepalive.machine.js';
import type { OriginLiveness } from '../../transports/origin-liveness.js';
import { settleProbe } from '../actors/keepalive-actions.js';
import type { Clock } from '../actors/shared-clock.js';

/** What an origin's keepalive needs of a member server (its runtime). */
interface KeepaliveMember {
  readonly context: { tell(report: KeepaliveReport): void };
  readonly probes: { busy(): boolean; probeNow(timeoutMs: number): Promise<ProbeOutput> };
  /** status() reads the origin keepalive's figures: a change of them is a move of the member. */
  readonly view: { touch(): void; state(): string };
}

/**
 * Each running origin keepalive, by the name its machine runs under (its context's `server`): the
 * provided actions find it from there (`bind evidence` runs while the actor is being created).
 */
const running = new Map<string, OriginKeepalive>();
let created = 0;

const NOTHING_TO_PROBE: ProbeOutput = { skipped: true };

const originKeepaliveMachine = keepaliveMachine.provide({
  actions: {
    'bind evidence': assign<KeepaliveContext, KeepaliveEvent, unknown, KeepaliveEvent, never>(({ context }) => ({
      evidence: running.get(context.server)?.liveness,
    })),
    'send probe': ({ self }, { server, timeoutMs }) =>
      settleProbe(self, () => running.get(server)?.probe(timeoutMs) ?? Promise.resolve(NOTHING_TO_PROBE)),
    'report connection dead': ({ context }) => running.get(context.server)?.lost(connectionLost(context)),
  },
});

class OriginKeepalive {
  /** In probe order: a probed member moves to the end. */
  private readonly members = new Set<KeepaliveMember>();
  /** Created after the first member's step: not inside the machine action that joins (XState warns of that). */
  private actor: Actor<typeof originKeepaliveMachine> | undefined = undefined;
  private ended = false;
  private lastRttMs: number | undefined = undefined;
  private missed = 0;

  /** Its machine's `server`: the origin, and which of its keepalives (one per clock and settings). */
  private readonly name: string;

  constructor(
    origin: string,
    private readonly settings: KeepaliveSettings,
    readonly liveness: OriginLiveness,
    private readonly clock: Clock | undefined,
    /** Called once, when the keepalive ends (its last member left, or its members were told it is lost). */
    private readonly onEnd: () => void,
  ) {
    this.name = `${origin} (keepalive ${++created})`;
  }

  /** What a member's status() shows: the origin keepalive's last round trip and misses in a row. */
  figures(): { lastRttMs: number | undefined; missed: number } {
    return { lastRttMs: this.lastRttMs, missed: this.missed };
  }

  join(member: KeepaliveMember): void {
    this.members.add(member);
    if (this.members.size === 1 && this.actor === undefined) queueMicrotask(() => this.begin());
  }

  leave(member: KeepaliveMember): void {
    if (this.members.delete(member) && this.members.size === 0) this.end();
  }

  /**
   * `send probe`: the next ready member without requests in flight probes (requests in flight
   * prove it, or time out and are its own evidence). A member no longer `ready` that did not
   * leave (its actor was stopped, or crashed) is dropped here.
   */
  probe(timeoutMs: number): Promise<ProbeOutput> {
    for (const member of this.members) {
      if (member.view.state() !== 'ready') {
        this.members.delete(member);
        continue;
      }
      if (member.probes.busy()) continue;
      this.members.delete(member);
      this.members.add(member);
      return member.probes.probeNow(timeoutMs);
    }
    // Settled after the actor's own step; an ended keepalive is not told.
    return Promise.resolve(NOTHING_TO_PROBE).finally(() => {
      if (this.members.size === 0) this.end();
    });
  }

  /** `maxMissed` misses in a row: every member is told, and later members start a new keepalive. */
  lost(report: KeepaliveReport): void {
    const members = [...this.members];
    this.members.clear();
    this.end();
    // After the actor's step: members' moves are not made inside its action (XState warns of that).
    queueMicrotask(() => {
      for (const member of members) member.context.tell(report);
    });
  }

  private begin(): void {
    if (this.ended) return;
    running.set(this.name, this);
    const actor = createActor(originKeepaliveMachine, {
      input: { server: this.name, settings: this.settings },
      ...(this.clock && { clock: this.clock }),
    });
    this.actor = actor;
    actor.subscribe((snapshot) => {
      const { lastRttMs, missed } = snapshot.context;
      if (lastRttMs === this.lastRttMs && missed === this.missed) return;
      this.lastRttMs = lastRttMs;
      this.missed = missed;
      for (const member of this.members) member.view.touch();
    });
    actor.start();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    running.delete(this.name);
    this.onEnd();
    // After the actor's own step (`report connection dead`); `dead` has no delay pending anyway.
    const actor = this.actor;
    if (actor) queueMicrotask(() => actor.stop());
  }
}

/**
 * The origin keepalives of the process, by settings and origin: servers of one origin in many
 * supervisors (each `connect()` is one) share one. It runs on the clock of the member that
 * started it (a supervisor's shared clock keeps working after its supervisor stopped).
 */
const keepalives = new Map<string, OriginKeepalive>();

/** `ready`: `member` joins the keepalive of its origin (started by the first member). */
function joinOriginKeepalive(
  member: KeepaliveMember,
  origin: string,
  liveness: OriginLiveness,
  settings: KeepaliveSettings,
  clock: Clock | undefined,
): OriginKeepalive {
  const key = `${settings.intervalMs}/${settings.timeoutMs}/${settings.maxMissed} ${origin}`;
  let keepalive = keepalives.get(key);
  if (!keepalive) {
    const created = new OriginKeepalive(origin, settings, liveness, clock, () => {
      if (keepalives.get(key) === created) keepalives.delete(key);
    });
    keepalives.set(key, (keepalive = created));
  }
  keepalive.join(member);
  return keepalive;
}

/** A server's part in its origin's keepalive (the machine's `join` / `leave origin keepalive`). */
export class OriginKeepaliveShare {
  private keepalive: OriginKeepalive | undefined = undefined;

  /** A server with an origin (HTTP) has a part; a stdio server has none. */
  static of(
    member: KeepaliveMember & { origin: { origin: string | undefined; liveness: OriginLiveness } },
  ): OriginKeepaliveShare | undefined {
    const { origin, liveness } = member.origin;
    return origin === undefined ? undefined : new OriginKeepaliveShare(member, origin, liveness);
  }

  constructor(
    private readonly member: KeepaliveMember,
    private readonly origin: string,
    private readonly liveness: OriginLiveness,
  ) {}

  join(settings: KeepaliveSettings, clock: Clock | undefined): void {
    this.leave();
    this.keepalive = joinOriginKeepalive(this.member, this.origin, this.liveness, settings, clock);
  }

  leave(): void {
    this.keepalive?.leave(this.member);
    this.keepalive = undefined;
  }

  /** The origin keepalive's figures while the server is one of its members. */
  figures(): { lastRttMs: number | undefined; missed: number } | undefined {
    return this.keepalive?.figures();
  }
}
