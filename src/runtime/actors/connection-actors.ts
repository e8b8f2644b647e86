/**
 * The machines' effects: each actor and action finds its server's host (the contract in
 * machines/connection-host.ts) through its actor system, so one provided machine serves every
 * server of every supervisor (a `provide` per connection would rebuild every state node of
 * every machine).
 */
import { fromPromise, type AnyActorLogic } from 'xstate';
import {
  connectionMachine,
  type ConnectTransportInput,
  type DiscoverVerdict,
  type ProbeVerdict,
  type ServerRef,
  type SessionInfo,
  type TransportOpened,
} from '../../../machines/connection.machine.js';
import type { ConnectionHost } from '../../../machines/connection-host.js';
import { keepaliveMachine } from '../../../machines/keepalive.machine.js';
import { listenerMachine } from '../../../machines/listener.machine.js';
import { sseFallbackMachine, type SseFallbackInput } from '../../../machines/sse-fallback.machine.js';
import { followStreamActions, stopFollowedStream } from './listener-actors.js';
import { bindEvidence, sendProbe } from './keepalive-actions.js';
import { runtimeOf } from './runtime-registry.js';
import { providedSubscriptionMachine } from '../events/subscription-actors.js';
import { clockOf } from './xstate-internals.js';

/** What a promise actor of the machines runs: one call of its server's host. */
type HostCall = (system: object, input: ServerRef, signal: AbortSignal) => Promise<unknown>;

/** Each promise actor's call, by its logic: a stopped connection's moves run it without an actor (stopped-moves.ts). */
const hostCalls = new WeakMap<AnyActorLogic, HostCall>();

/** A promise actor that is one call of its server's host. */
function hostActor<Output, Input extends ServerRef = ServerRef>(
  call: (host: ConnectionHost, input: Input, signal: AbortSignal) => Promise<Output>,
) {
  const run = (system: object, input: Input, signal: AbortSignal) =>
    call(runtimeOf(system, input.server), input, signal);
  const logic = fromPromise<Output, Input>(({ input, system, signal }) => run(system, input, signal));
  hostCalls.set(logic, run as HostCall);
  return logic;
}

/** The host call an invoked actor stands for; undefined for a machine child. */
export function hostCallOf(logic: AnyActorLogic): HostCall | undefined {
  return hostCalls.get(logic);
}

export const providedConnectionMachine = connectionMachine.provide({
  actors: {
    'connect transport': hostActor<TransportOpened, ConnectTransportInput>((host, input) =>
      host.connectTransport(input.transport),
    ),
    'sse-fallback': sseFallbackMachine.provide({
      actors: {
        'open legacy stream': hostActor<void, SseFallbackInput>((host) => host.openLegacyTransport()),
      },
    }),
    keepalive: keepaliveMachine.provide({ actions: { 'send probe': sendProbe, 'bind evidence': bindEvidence } }),
    'discover server': hostActor<DiscoverVerdict>((host) => host.discoverServer()),
    'initialize session': hostActor<SessionInfo>((host) => host.initialize()),
    'probe session': hostActor<ProbeVerdict>((host) => host.probeSession()),
    authorize: hostActor<void>((host, _input, signal) => host.authorize(signal)),
    'close session': hostActor<void>((host) => host.closeSession()),
    listener: listenerMachine.provide({ actions: followStreamActions }),
    subscription: providedSubscriptionMachine,
    'wait for origin': hostActor<void>((host) => host.origin.turn()),
  },
  actions: {
    'hold requests': ({ context, system }) => runtimeOf(system, context.server).holdRequests(),
    'release requests': ({ context, system }) => runtimeOf(system, context.server).releaseRequests(),
    'reject waiting requests': ({ context, system }, { reason }) =>
      runtimeOf(system, context.server).rejectWaitingRequests(reason),
    'fail parked requests': ({ context, system }) => runtimeOf(system, context.server).failParkedRequests(),
    'settle doubtful requests': ({ context, system }, { lost }) =>
      runtimeOf(system, context.server).settleDoubtfulRequests(lost),
    'settle attempt': ({ context, system }) => runtimeOf(system, context.server).settleAttempt(),
    'replace transport': ({ context, system }) => runtimeOf(system, context.server).replaceTransport(),
    'ask about waiting requests': ({ context, system }) => runtimeOf(system, context.server).origin.ask(),
    'join origin keepalive': ({ context, system, self }) => {
      if (context.keepalive === false) return;
      runtimeOf(system, context.server).originKeepalive?.join(context.keepalive, clockOf(self));
    },
    'leave origin keepalive': ({ context, system }) => runtimeOf(system, context.server).originKeepalive?.leave(),
    'stop followed stream': stopFollowedStream,
  },
});
