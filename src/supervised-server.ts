/**
 * The supervisor's small helpers around the actor tree: waiting for a connection to end or be
 * forgotten, the status of a disabled server, and what the supervisor machine needs of a config.
 */
import type { Actor, ActorRefFrom } from 'xstate';
import { DEFAULT_RESTART_POLICY } from '../machines/restart-policy.js';
import type { SupervisedServer } from '../machines/supervisor.machine.js';
import type { ServerConfig } from './config/server-config.js';
import { pinOf } from './protocol/era.js';
import type { ServerStatus } from './server-handle.js';
import type { providedConnectionMachine, providedSupervisorMachine } from './runtime/actors/connection-actors.js';
import { probeTimeoutMs } from './core/probe-timeout.js';

type ConnectionRef = ActorRefFrom<typeof providedConnectionMachine>;

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
