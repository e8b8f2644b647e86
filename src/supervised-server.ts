/**
 * The supervisor's small helpers around the actor tree: one supervisor machine per server (its
 * own actor system), waiting for a connection to end or be forgotten, the status of a disabled
 * server, and what the supervisor machine needs of a config.
 */
import { createActor, type Actor, type ActorRefFrom, type InspectionEvent } from 'xstate';
import type { Clock } from './runtime/actors/shared-clock.js';
import { DEFAULT_RESTART_POLICY } from '../machines/restart-policy.js';
import type { SupervisedServer } from '../machines/supervisor.machine.js';
import type { ServerConfig } from './config/server-config.js';
import { pinOf } from './protocol/era.js';
import type { ServerStatus } from './server-handle.js';
import { providedSupervisorMachine, type providedConnectionMachine } from './runtime/actors/connection-actors.js';
import { registerRuntimes } from './runtime/actors/runtime-registry.js';
import { followConnection } from './runtime/lifecycle-facts.js';
import type { ServerRuntime } from './runtime/server-runtime.js';
import { probeTimeoutMs } from './core/probe-timeout.js';

type ConnectionRef = ActorRefFrom<typeof providedConnectionMachine>;

export type ServerActor = Actor<typeof providedSupervisorMachine>;

export interface ServerActorOptions {
  random: (() => number) | undefined;
  inspect: ((event: InspectionEvent) => void) | undefined;
  /** Shared by every server of the supervisor (runtime/actors/shared-clock.ts). */
  clock?: Clock | undefined;
  /** The actor ended with an error (a bug in the machine): the server's requests fail with it. */
  onError: (error: Error) => void;
}

/**
 * Starts the supervisor machine for one server, as a root actor with an actor system of its own.
 * One machine (and system) per server, not one for all: XState copies a parent's children on each
 * spawn and stop, and walks every delayed event of a system on each actor's stop, so one parent of
 * N connections costs O(N) per spawn, per probe and per handshake (O(N²) at 10,000 servers). The
 * supervisor machine's rules are per server anyway: one server's restarts never touch another's.
 */
export function startServerActor(
  server: SupervisedServer,
  runtime: ServerRuntime,
  options: ServerActorOptions,
): ServerActor {
  const actor = createActor(providedSupervisorMachine, {
    input: { servers: [server], random: options.random },
    inspect: options.inspect,
    ...(options.clock && { clock: options.clock }),
  });
  registerRuntimes(actor.system, (name) => {
    if (name !== runtime.name) throw new Error(`unknown server '${name}'`);
    return runtime;
  });
  actor.subscribe({
    error: (error) => options.onError(error instanceof Error ? error : new Error(String(error))),
  });
  runtime.system = actor.system;
  // status() compares a server's counters only, until one of its machines moves.
  runtime.view.watch();
  // Spawned with the machine, started with it: followed now, before the first fact.
  const connection = actor.system.get(runtime.name) as ConnectionRef | undefined;
  if (connection) followConnection(connection, runtime);
  actor.start();
  return actor;
}

/** Sends STOP and resolves once the machine has closed its connection and stopped. */
export function stopServerActor(actor: ServerActor): Promise<void> {
  return new Promise<void>((resolve) => {
    const subscription = actor.subscribe({ complete: () => resolve(), error: () => resolve() });
    if (actor.getSnapshot().status !== 'active') {
      subscription.unsubscribe();
      resolve();
      return;
    }
    actor.send({ type: 'STOP' });
  }).then(() => {
    actor.stop();
  });
}

/** Resolves when an actor has ended (closed, or crashed). */
export function waitForEnd(ref: ConnectionRef): Promise<void> {
  return new Promise<void>((resolve) => {
    const subscription = ref.subscribe({ complete: () => resolve(), error: () => resolve() });
    if (ref.getSnapshot().status !== 'active') {
      subscription.unsubscribe();
      resolve();
    }
  });
}

/** Resolves when the supervisor machine no longer lists the server (or has stopped). */
export function waitUntilForgotten(actor: Actor<typeof providedSupervisorMachine>, name: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const gone = () =>
      actor.getSnapshot().status !== 'active' || !actor.getSnapshot().context.servers.some((s) => s.name === name);
    const subscription = actor.subscribe({
      next: () => {
        if (gone()) {
          subscription.unsubscribe();
          resolve();
        }
      },
      complete: () => resolve(),
      error: () => resolve(),
    });
  });
}

/** A disabled server's status: its name and transport kind, nothing live. */
export function disabledStatus(config: ServerConfig): ServerStatus {
  return {
    name: config.name,
    state: 'disabled',
    transport: config.kind === 'command' ? 'stdio' : config.type === 'sse' ? 'sse' : undefined,
    protocolVersion: undefined,
    serverInfo: undefined,
    sessionId: undefined,
    restarts: 0,
    lastError: undefined,
    keepalive: { lastRttMs: undefined, missed: 0 },
    requests: { inFlight: 0, waiting: 0 },
  };
}

/** What the supervisor machine needs of a server: its name, restart policy and connection input. */
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
