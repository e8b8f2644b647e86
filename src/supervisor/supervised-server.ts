/**
 * The supervisor's small helpers around the actor tree: one root actor per server (its
 * connection, in an actor system of its own), waiting for a connection to end, the status of a
 * disabled server, and what the connection machine needs of a config.
 */
import { createActor, type Actor, type InspectionEvent } from 'xstate';
import type { Clock } from '../runtime/actors/shared-clock.js';
import { DEFAULT_RESTART_POLICY } from '../../machines/restart-policy.js';
import type { SupervisedServer } from '../../machines/supervisor.machine.js';
import type { ListenTurn } from '../../machines/connection.types.js';
import { isEnded } from '../../machines/connection.machine.js';
import type { ServerConfig } from '../config/server-config.js';
import { pinOf } from '../protocol/era.js';
import type { ServerStatus } from '../handle/server-handle.js';
import { providedConnectionMachine } from '../runtime/actors/connection-actors.js';
import { stopFollowedStream } from '../runtime/actors/listener-actors.js';
import { stopAndClose } from '../runtime/actors/stopped-moves.js';
import { registerRuntimes } from '../runtime/actors/runtime-registry.js';
import { followConnection } from '../runtime/lifecycle-facts.js';
import type { ServerRuntime } from '../runtime/server-runtime.js';
import { probeTimeoutMs } from '../protocol/deadlines.js';
import { ConnectionClosedError } from '../core/errors.js';

/** A server's root actor: its connection, which decides its own restarts (machines/connection.recovery.ts). */
export type ServerActor = Actor<typeof providedConnectionMachine>;

export interface ServerActorOptions {
  random: (() => number) | undefined;
  inspect: ((event: InspectionEvent) => void) | undefined;
  /** Shared by every server of the process (runtime/actors/shared-clock.ts). */
  clock?: Clock | undefined;
  /** The actor ended with an error (a bug in the machine): the server's requests fail with it. */
  onError: (error: Error) => void;
  /** A mass start's: the listening stream opens after the start's handshakes (src/listen-turn.ts). */
  listenTurn?: ListenTurn | undefined;
}

/**
 * Starts a server's connection machine as a root actor with an actor system of its own, under its
 * restart policy: no supervisor actor above it. One system per server, not one for all: XState
 * copies a parent's children on each spawn and stop, and walks every delayed event of a system on
 * each actor's stop, so one parent of N connections costs O(N) per spawn, per probe and per
 * handshake (O(N²) at 10,000 servers). A connection that throws (a bug) fails its server only.
 */
export function startServerActor(
  server: SupervisedServer,
  runtime: ServerRuntime,
  options: ServerActorOptions,
): ServerActor {
  const actor = createActor(providedConnectionMachine, {
    input: { ...server.connection, restart: server.restart, random: options.random, listenTurn: options.listenTurn },
    // Found by name in its system (runtime/context/server-context.ts), as when it was a child.
    id: server.name,
    systemId: server.name,
    inspect: options.inspect,
    ...(options.clock && { clock: options.clock }),
  });
  registerRuntimes(actor.system, (name) => {
    if (name !== runtime.context.name) throw new Error(`unknown server '${name}'`);
    return runtime;
  });
  actor.subscribe({
    error: (error) => {
      // The machine is gone and says nothing more: its runtime fails the server (the crash path),
      // and the stream its listener handed over is closed here (no exit action of `ready` runs).
      stopFollowedStream({ self: actor });
      runtime.onCrash(error);
      options.onError(error instanceof Error ? error : new Error(String(error)));
    },
  });
  runtime.context.system = actor.system;
  // status() compares a server's counters only, until one of its machines moves.
  runtime.view.watch();
  // Followed now, before the first fact (emitted when it starts).
  followConnection(actor, runtime);
  actor.start();
  return actor;
}

/** Closes the connection and resolves once it has ended (closed, or crashed) and stopped. */
export function stopServerActor(actor: ServerActor): Promise<void> {
  const ended = waitForEnd(actor);
  if (actor.getSnapshot().status === 'active') actor.send({ type: 'CLOSE' });
  return ended.then(() => {
    actor.stop();
  });
}

/**
 * The whole supervisor stops: the server's root actor is stopped once and its machine makes the
 * moves of `CLOSE` without it (runtime/actors/stopped-moves.ts), so the transition events, the
 * origin's turns and the telemetry read what they read for a handle's `close()`. A server that
 * ended already, or is closing by its handle, ends as before.
 */
export function closeWithSupervisor(actor: ServerActor): Promise<void> {
  const snapshot = actor.getSnapshot();
  if (snapshot.status !== 'active' || snapshot.value === 'closing') return stopServerActor(actor);
  return stopAndClose(actor);
}

/** Resolves when an actor has ended (closed, or crashed). */
export function waitForEnd(ref: ServerActor): Promise<void> {
  return new Promise<void>((resolve) => {
    const subscription = ref.subscribe({ complete: () => resolve(), error: () => resolve() });
    if (ref.getSnapshot().status !== 'active') {
      subscription.unsubscribe();
      resolve();
    }
  });
}

/** Closes one connection (a handle's `close()`); resolves once it has ended. */
export async function closeConnection(ref: ServerActor | undefined): Promise<void> {
  if (!ref || ref.getSnapshot().status !== 'active') return;
  const closed = waitForEnd(ref);
  ref.send({ type: 'CLOSE' });
  await closed;
}

/** A handle's `reconnect()`: resolves when the connection serves again, or went down once more. */
export async function reconnectConnection(
  name: string,
  runtime: ServerRuntime | undefined,
  ref: ServerActor | undefined,
): Promise<void> {
  if (!runtime || !ref || ref.getSnapshot().status !== 'active' || isEnded(runtime.view.state(), true)) {
    throw new ConnectionClosedError('cannot reconnect: the connection is closed', { server: name });
  }
  const attempt = runtime.view.nextAttempt();
  ref.send({ type: 'RECONNECT' });
  await attempt;
}

/** How many times a server's connection restarted (its own restart record). */
export function restartsOf(actor: ServerActor | undefined): number {
  return actor?.getSnapshot().context.restarts.total ?? 0;
}

/** A disabled server's status: its name and transport kind, nothing live. */
export function disabledStatus(config: ServerConfig): ServerStatus {
  return noConnectionStatus(
    config.name,
    'disabled',
    config.kind === 'command' ? 'stdio' : config.type === 'sse' ? 'sse' : undefined,
  );
}

/** The status of a server with no connection to read (disabled, or not opened yet for a principal). */
export function noConnectionStatus(
  name: string,
  state: ServerStatus['state'],
  transport: ServerStatus['transport'] = undefined,
): ServerStatus {
  return {
    name,
    state,
    transport,
    protocolVersion: undefined,
    serverInfo: undefined,
    sessionId: undefined,
    restarts: 0,
    lastError: undefined,
    keepalive: { lastRttMs: undefined, missed: 0 },
    requests: { inFlight: 0, waiting: 0 },
  };
}

/** What a server's connection needs of its config: its name, restart policy and connection input. */
export function supervisedServer(config: ServerConfig): SupervisedServer {
  return {
    name: config.name,
    restart: config.restart ?? DEFAULT_RESTART_POLICY,
    connection: {
      server: config.name,
      transport: config.type,
      listenerOpenTimeoutMs: probeTimeoutMs(config),
      provenAfterMs: config.restart.provenAfterMs,
      keepalive: config.keepalive,
      revive: config.revive,
      era: pinOf(config.protocolVersion).era,
      waitingReconnectMs: config.restart.waitingReconnectMs,
    },
  };
}
