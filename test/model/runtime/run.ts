/**
 * One walk of a connection-model path through the real runtime: a real Supervisor (machines,
 * server runtime, gate, evidence, replay policy) over the scripted transport, under fake timers.
 * Each model event is produced the way the real system produces it — a request answered 404, a
 * transport that dies, a listening stream refused, the clock reaching a delay — never by sending
 * the machine its own evidence. Only the supervisor's answers (RESTART, GIVE_UP) are the
 * script's: its own restart timer is set far beyond any run.
 */
import { expect, vi } from 'vitest';
import type { Actor, AnyActorRef, AnyEventObject, AnyMachineSnapshot, InspectionEvent } from 'xstate';
import {
  AuthorizationError,
  ConnectionClosedError,
  OutcomeUnknownError,
  SessionExpiredError,
  TransportError,
} from '../../../src/core/errors.js';
import type { ServerHandle } from '../../../src/handle/server-handle.js';
import { createSupervisor, type Supervisor } from '../../../src/supervisor/supervisor.js';
import { originTurns } from '../../../src/runtime/recovery/origin-turns.js';
import type { Coverage } from '../coverage.js';
import { ScriptedAuth } from './scripted-auth.js';
import { Script, type Exchange } from './scripted-transport.js';
import { RequestBook, TOOLS } from './requests.js';
import { INITIALIZE_RESULT, socketError, unauthorized } from './scripted-answers.js';
import {
  answerDiscover,
  failDiscover,
  discoverResult,
  isModernSession,
  OUR_MODERN_VERSION,
  refuseVersion,
  WireCheck,
} from './modern-era.js';

export const SERVER = 'docs';
const ORIGIN = 'http://127.0.0.1:9';
/** Requests wait in most steps: the runtime caps the backoff (`hurrying`), a state the pure model enters only when told. */
const HURRIED_REVIVE = 'xstate.after.waiting reconnect delay.connection.failed.hurrying to revive';
/** `listenerOpenTimeoutMs` is min(requestTimeoutMs, 10 s); the proven delay comes after it. */
const FAR = 100_000_000;

function config(auth: ScriptedAuth, protocolVersion: 'legacy' | 'auto') {
  return {
    url: `${ORIGIN}/mcp`,
    type: 'auto',
    // The model's INPUT pins the legacy era (connection.spec.ts): no server/discover probe; its
    // `auto era` variant (AUTO_ERA_INPUT) probes.
    protocolVersion,
    auth,
    requestTimeoutMs: FAR,
    keepalive: false,
    probeAfterTimeouts: 0,
    restart: {
      maxRestarts: 1_000,
      withinMs: FAR,
      provenAfterMs: 20_000,
      backoff: { initialMs: FAR, maxMs: FAR, factor: 2, jitter: 0 },
    },
    revive: { initialMs: 1_000, maxMs: 4_000 },
  } as const;
}

/** Lets promise chains and relayed events settle (setImmediate is not faked). */
export async function flush(rounds = 6): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

export class RuntimeRun {
  readonly script = new Script();
  readonly auth = new ScriptedAuth();
  readonly supervisor: Supervisor;
  readonly handle: ServerHandle;
  readonly book: RequestBook;
  /** The connection served at some point during the current step. */
  servedDuringStep = false;
  readonly wire = new WireCheck(this.script);

  constructor(coverage: Coverage, protocolVersion: 'legacy' | 'auto' = 'legacy') {
    this.supervisor = createSupervisor({
      servers: { [SERVER]: config(this.auth, protocolVersion) },
      createTransport: this.script.factory,
      random: () => 0.5,
      inspect: (event) => this.observe(event, coverage),
    });
    this.handle = this.supervisor.server(SERVER);
    // Inside a transition listener, status() already says what the move did (issue 28).
    this.handle.on('transition', (t) => {
      if (t.to === 'ready') this.lastErrorAtReady.push(this.handle.status().lastError);
    });
    this.book = new RequestBook(this.script, this.handle);
    void this.supervisor.start();
  }

  /** status().lastError read inside each transition listener call for `ready`. */
  readonly lastErrorAtReady: Array<string | undefined> = [];

  /** Off for the epilogue: only model steps, each checked, count toward the coverage gate. */
  recording = true;

  private observe(event: InspectionEvent, coverage: Coverage): void {
    if (event.type !== '@xstate.microstep' || (event.actorRef as { id?: string }).id !== SERVER) return;
    if (this.recording) coverage.record(event._transitions);
    if (JSON.stringify((event.snapshot as { value?: unknown }).value) === '{"ready":"serving"}')
      this.servedDuringStep = true;
  }

  private ref: AnyActorRef | undefined;

  /** The server's connection actor (kept: once closed, it leaves the actor system). */
  get connection(): AnyActorRef {
    // Each server's supervisor machine is a root actor of its own (src/supervised-server.ts).
    const root = (Reflect.get(this.supervisor, 'actors') as Map<string, Actor<any>>).get(SERVER)!;
    this.ref ??= root.system.get(SERVER) as AnyActorRef;
    return this.ref;
  }

  snapshot(): AnyMachineSnapshot {
    return this.connection.getSnapshot() as AnyMachineSnapshot;
  }

  generation(): number {
    const session = this.snapshot().context.session as { sessionGeneration: number } | undefined;
    if (!session) throw new Error('no session');
    return session.sessionGeneration;
  }

  /** Before a step: callers keep calling; the first time it serves, the tools are listed. */
  async prologue(): Promise<void> {
    this.servedDuringStep = false;
    this.book.clearAllowances();
    const snapshot = this.snapshot();
    if (snapshot.matches({ ready: 'serving' })) {
      if (!this.book.toolsListed) {
        this.book.toolsListed = true;
        void this.handle.request('tools/list');
        this.script.answer(this.script.waitingFor('tools/list')!, { tools: TOOLS });
        await flush();
      }
      const onWire = this.book.tracked.filter((r) => this.book.inFlight(r)?.transport === this.script.current);
      if (onWire.length < 3) this.book.issueBatch();
    } else if (!snapshot.matches('closing') && !snapshot.matches({ failed: 'for good' })) {
      this.book.issueHeld();
    }
    await flush();
  }

  /** Produces one model event the way the real system does. */
  async realize(event: AnyEventObject, modelBefore: AnyMachineSnapshot): Promise<void> {
    const current =
      event.generation === undefined || event.generation === modelBefore.context.session?.sessionGeneration;
    const script = this.script;
    switch (event.type) {
      case 'xstate.done.actor.transport':
      case 'xstate.error.actor.transport':
        await this.endPreviousSessions();
        return this.settleOpen(event.type.includes('done') ? undefined : this.transportError(event.error));
      case 'xstate.done.actor.sse-fallback':
        return this.settleOpen(event.output.found ? undefined : socketError('ECONNREFUSED'));
      case 'xstate.done.actor.discover':
        return answerDiscover(script, event, modelBefore);
      case 'xstate.error.actor.discover':
        return failDiscover(script, event, this.auth.generation);
      case 'xstate.done.actor.handshake':
        return script.answer(script.waitingFor('initialize')!, INITIALIZE_RESULT);
      case 'xstate.error.actor.handshake':
        return script.fail(script.waitingFor('initialize')!, this.handshakeError(event.error));
      case 'xstate.done.actor.authorize':
        return this.auth.pending!.resolve();
      case 'xstate.error.actor.authorize':
        this.book.allowWaitingToFail(AuthorizationError, 'authorization');
        this.book.allowWaitingToFail(AuthorizationError, 'replay');
        return this.auth.pending!.reject(new AuthorizationError('the AS is down', { fatal: false }));
      case 'xstate.done.actor.close':
      case 'xstate.error.actor.close':
        for (const t of script.transports.filter((t) => t.terminateCalled && !t.terminating.settled)) {
          if (event.type.includes('done')) t.terminating.resolve();
          else t.terminating.reject(new Error('DELETE failed'));
        }
        return;
      case 'xstate.done.actor.probe':
        return this.answerProbe(event.output as { verdict: string });
      case 'CONNECTION_LOST':
        this.book.markLost();
        this.book.settleDoubt(false);
        return script.current!.die(new Error(event.error as string));
      case 'SESSION_EXPIRED': {
        const { request, exchange } = this.book.carrier(this.generation());
        if (isModernSession(modelBefore)) {
          // Modern: the server no longer speaks our version (-32022); the request waits, then goes out anew.
          this.book.mark(request, 'replay');
          this.book.settleDoubt(false);
          this.wire.refused(exchange);
          return refuseVersion(script, exchange);
        }
        const generation = current ? this.generation() : this.generation() - 1;
        this.book.mark(request, 'replay');
        if (current) this.book.settleDoubt(false);
        return script.fail(exchange, new SessionExpiredError('HTTP 404', generation), true);
      }
      case 'SESSION_IN_DOUBT':
        return isModernSession(modelBefore) ? this.broken() : this.doubt(current);
      case 'SERVER_UNREACHABLE': {
        const { request, exchange } = this.book.carrier(this.generation());
        this.book.mark(request, 'replay');
        this.book.settleDoubt(false);
        return script.fail(exchange, socketError('ECONNREFUSED'), true);
      }
      case 'AUTHORIZATION_REQUIRED': {
        const { request, exchange } = this.book.carrier(this.generation());
        this.book.mark(request, 'authorization');
        return script.fail(exchange, unauthorized(this.auth.generation), true);
      }
      case 'LISTENER_SETTLED':
        return this.openListener();
      case 'LISTENER_REFUSED_SESSION':
        return this.driveListener('refuse');
      case 'LISTENER_LOST':
        return this.driveListener('lose');
      case 'CLOSE':
        this.book.allowAllToFail(ConnectionClosedError);
        this.connection.send({ type: 'CLOSE' });
        return;
      case 'RECONNECT':
        if (modelBefore.matches('probing')) this.book.settleDoubt(false);
        this.connection.send({ type: 'RECONNECT' });
        return;
      case 'RESTART':
        // The origin is up: the turn is now (the model's next step is the origin's `done`).
        originTurns.succeeded(ORIGIN);
        this.connection.send({ type: 'RESTART' });
        return;
      case 'GIVE_UP':
        if (event.fatal === true) this.book.allowWaitingToFail(ConnectionClosedError);
        this.connection.send(event);
        return;
    }
    if (event.type.startsWith('xstate.after.revive delay')) {
      originTurns.succeeded(ORIGIN);
      const hurried = this.snapshot().matches({ failed: 'hurrying to revive' });
      return this.advanceTo(hurried ? HURRIED_REVIVE : event.type, this.connection, true);
    }
    if (event.type.startsWith('xstate.after.')) return this.advanceTo(event.type, this.connection, true);
    throw new Error(`the runtime model cannot produce ${event.type}`);
  }

  /** A RECONNECT ends the old session first (DELETE); the script lets it. */
  private async endPreviousSessions(): Promise<void> {
    for (const t of this.script.transports) if (t.terminateCalled && !t.terminating.settled) t.terminating.resolve();
    await flush();
  }

  private settleOpen(error: Error | undefined): void {
    const opening = this.script.transports.filter((t) => !t.opening.settled).at(-1);
    if (!opening) throw new Error('no transport is being opened');
    if (error) opening.opening.reject(error);
    else opening.opening.resolve();
  }

  private transportError(error: unknown): Error {
    if ((error as { code?: string }).code === 'AUTHORIZATION_REQUIRED') return unauthorized(this.auth.generation);
    return socketError('ECONNREFUSED');
  }

  private handshakeError(error: unknown): Error {
    const { code, status } = error as { code?: string; status?: number };
    if (code === 'AUTHORIZATION_REQUIRED') return unauthorized(this.auth.generation);
    if (status !== undefined) return new TransportError(`HTTP ${status} for 'initialize'`, status);
    return new Error("request 'initialize' timed out");
  }

  /** A 400 that does not name the session; and a reset mid-response on another request. */
  private doubt(current: boolean): void {
    const generation = this.generation();
    const { request, exchange } = this.book.carrier(generation);
    const error = new TransportError("HTTP 400 for 'tools/call'", 400, {
      body: 'Bad Request: invalid arguments',
      sessionGeneration: current ? generation : generation - 1,
    });
    if (current) this.book.mark(request, 'doubt');
    else this.book.mark(request, 'none', TransportError);
    this.script.fail(exchange, error);
    if (!current) return;
    const other = this.book.tracked.find(
      (r) => r !== request && this.book.inFlight(r)?.transport === this.script.current,
    );
    if (!other) return;
    const broken = this.book.inFlight(other)!;
    if (this.book.isSafe(other)) this.book.mark(other, 'replay');
    else this.book.mark(other, 'none', OutcomeUnknownError);
    this.script.fail(broken, socketError('ECONNRESET'));
  }

  /** Modern: no 400 is about a session; a request whose connection broke puts it in doubt. */
  private broken(): void {
    const { request, exchange } = this.book.carrier(this.generation());
    if (this.book.isSafe(request)) this.book.mark(request, 'replay');
    else this.book.mark(request, 'none', OutcomeUnknownError);
    this.script.fail(exchange, socketError('ECONNRESET'));
  }

  /** The probe: `ping` on the 2025 wire, `server/discover` on the modern one. */
  private answerProbe({ verdict }: { verdict: string }): void {
    const ping: Exchange = (this.script.waitingFor('ping') ?? this.script.waitingFor('server/discover'))!;
    this.book.settleDoubt(verdict === 'alive');
    if (verdict === 'alive')
      return this.script.answer(ping, ping.modernVersion ? discoverResult([ping.modernVersion]) : {});
    if (verdict === 'unauthorized') return this.script.fail(ping, unauthorized(this.auth.generation));
    if (verdict === 'unreachable') return this.script.fail(ping, socketError('ECONNREFUSED'));
    const generation = this.generation();
    this.script.fail(
      ping,
      new TransportError("HTTP 400 for 'ping'", 400, { body: 'Bad Request', sessionGeneration: generation }),
    );
  }

  private openListener(): void {
    const listener = this.script.listener;
    if (!listener || listener.open.settled) throw new Error('no listening stream is being opened');
    listener.open.resolve({ kind: 'open', read: () => listener.read.promise, cancel: () => {} });
  }

  /**
   * Works the listening stream until the connection hears of it: `refuse` opens it, ends it and
   * answers the reopening 404; `lose` fails it until the listener gives up.
   */
  private async driveListener(how: 'refuse' | 'lose'): Promise<void> {
    for (let round = 0; round < 40 && this.snapshot().matches('ready'); round++) {
      const listener = this.script.listener!;
      // No listener child while the stream is open: it was handed over (listener.machine.ts).
      const child = this.snapshot().children.listener as AnyActorRef | undefined;
      const opened = !child || (child.getSnapshot() as AnyMachineSnapshot).context.opened === true;
      if (!listener.open.settled) {
        if (how === 'lose') listener.open.reject(socketError('ECONNRESET'));
        else if (opened) listener.open.resolve({ kind: 'unavailable', status: 404 });
        else this.openListener();
      } else if (!listener.read.settled) {
        if (how === 'lose') listener.read.reject(new Error('terminated'));
        else listener.read.resolve();
      } else if (child) {
        await this.advanceTo('xstate.after.reconnect delay.listener.waiting', child);
      }
      await flush();
    }
  }

  /**
   * Moves the fake clock to the due time of a scheduled event of `target`; `exactly`: nothing
   * happens 1 ms before, and a revival's time is the one status() announced.
   */
  async advanceTo(type: string, target: AnyActorRef, exactly = false): Promise<void> {
    const scheduled = Object.values(target.system.getSnapshot()._scheduledEvents) as Array<{
      event: AnyEventObject;
      target: AnyActorRef;
      delay: number;
      startedAt: number;
    }>;
    const entry = scheduled.find((e) => e.event.type === type && e.target === target);
    if (!entry) throw new Error(`${type} is not scheduled`);
    const due = entry.startedAt + entry.delay;
    if (exactly) {
      if (type.includes('revive delay') || type === HURRIED_REVIVE)
        expect(this.handle.status().nextAttemptAt, 'status() says when the revival is').toBe(due);
      const before = JSON.stringify(this.snapshot().value);
      vi.advanceTimersByTime(Math.max(0, due - 1 - Date.now()));
      await flush();
      expect(JSON.stringify(this.snapshot().value), `${type} does not fire 1 ms early`).toBe(before);
    }
    vi.advanceTimersByTime(Math.max(0, due - Date.now()));
    await flush();
  }

  /**
   * After the path: the server comes back (every attempt succeeds, the probe finds the session
   * alive), so whatever waits must be sent. Returns false when the connection is gone for good.
   */
  async recover(): Promise<boolean> {
    this.recording = false;
    this.servedDuringStep = false;
    for (let round = 0; round < 20; round++) {
      const snapshot = this.snapshot();
      if (snapshot.status !== 'active' || snapshot.matches('closing') || snapshot.matches({ failed: 'for good' }))
        return false;
      if (snapshot.matches({ ready: 'serving' })) return true;
      if (snapshot.matches('connecting')) {
        await this.endPreviousSessions();
        this.settleOpen(undefined);
      } else if (snapshot.matches('discovering'))
        this.script.answer(this.script.waitingFor('server/discover')!, discoverResult([OUR_MODERN_VERSION]));
      else if (snapshot.matches('initializing') || snapshot.matches('reinitializing'))
        this.script.answer(this.script.waitingFor('initialize')!, INITIALIZE_RESULT);
      else if (snapshot.matches('probing')) this.answerProbe({ verdict: 'alive' });
      else if (snapshot.matches('authorizing')) this.auth.pending!.resolve();
      else if (snapshot.matches('reconnecting')) {
        originTurns.succeeded(ORIGIN);
        this.connection.send({ type: 'RESTART' });
      } else if (snapshot.matches('failed')) {
        originTurns.succeeded(ORIGIN);
        const hurried = snapshot.matches({ failed: 'hurrying to revive' });
        await this.advanceTo(
          hurried ? HURRIED_REVIVE : 'xstate.after.revive delay.connection.failed.waiting to revive',
          this.connection,
        );
      } else if (this.script.listener && !this.script.listener.open.settled) this.openListener();
      else
        await this.advanceTo('xstate.after.listener open timeout.connection.ready.opening listener', this.connection);
      await flush();
    }
    throw new Error(`the connection did not recover: ${JSON.stringify(this.snapshot().value)}`);
  }

  /** Stops the supervisor, letting every open and DELETE it waits for finish. */
  async stop(): Promise<void> {
    let stopped = false;
    const stopping = this.supervisor.stop().then(() => (stopped = true));
    for (let round = 0; round < 20 && !stopped; round++) {
      for (const t of this.script.transports) {
        if (!t.opening.settled) t.opening.reject(new Error('stopped'));
        if (!t.terminating.settled) t.terminating.resolve();
      }
      if (this.auth.pending && !this.auth.pending.settled) this.auth.pending.reject(new Error('stopped'));
      await flush();
    }
    await stopping;
  }
}
