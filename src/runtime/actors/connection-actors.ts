/**
 * The machines' effects: each actor and action finds its server's host (the contract in
 * machines/connection-host.ts) through its actor system, so one provided machine serves every
 * server of every supervisor (a `provide` per connection would rebuild every state node of
 * every machine).
 */
import { fromPromise } from 'xstate';
import {
  connectionMachine,
  type ConnectTransportInput,
  type DiscoverVerdict,
  type ProbeVerdict,
  type ServerRef,
  type SessionInfo,
  type TransportOpened,
} from '../../../machines/connection.machine.js';
import { keepaliveMachine } from '../../../machines/keepalive.machine.js';
import { listenerMachine } from '../../../machines/listener.machine.js';
import { sseFallbackMachine, type SseFallbackInput } from '../../../machines/sse-fallback.machine.js';
import { followStreamActions, stopFollowedStream } from './listener-actors.js';
import { bindEvidence, sendProbe } from './keepalive-actions.js';
import { runtimeOf } from './runtime-registry.js';
import { providedSubscriptionMachine } from '../events/subscription-actors.js';
import type { ActorClock } from '../../../machines/connection-host.js';

export const providedConnectionMachine = connectionMachine.provide({
  actors: {
    'connect transport': fromPromise<TransportOpened, ConnectTransportInput>(({ input, system }) =>
      runtimeOf(system, input.server).connectTransport(input.transport),
    ),
    'sse-fallback': sseFallbackMachine.provide({
      actors: {
        'open legacy stream': fromPromise<void, SseFallbackInput>(({ input, system }) =>
          runtimeOf(system, input.server).openLegacyTransport(),
        ),
      },
    }),
    keepalive: keepaliveMachine.provide({ actions: { 'send probe': sendProbe, 'bind evidence': bindEvidence } }),
    'discover server': fromPromise<DiscoverVerdict, ServerRef>(({ input, system }) =>
      runtimeOf(system, input.server).discoverServer(),
    ),
    'initialize session': fromPromise<SessionInfo, ServerRef>(({ input, system }) =>
      runtimeOf(system, input.server).initialize(),
    ),
    'probe session': fromPromise<ProbeVerdict, ServerRef>(({ input, system }) =>
      runtimeOf(system, input.server).probeSession(),
    ),
    authorize: fromPromise<void, ServerRef>(({ input, system, signal }) =>
      runtimeOf(system, input.server).authorize(signal),
    ),
    'close session': fromPromise<void, ServerRef>(({ input, system }) =>
      runtimeOf(system, input.server).closeSession(),
    ),
    listener: listenerMachine.provide({ actions: followStreamActions }),
    subscription: providedSubscriptionMachine,
    'wait for origin': fromPromise<void, ServerRef>(({ input, system }) =>
      runtimeOf(system, input.server).origin.turn(),
    ),
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
      runtimeOf(system, context.server).originKeepalive?.join(
        context.keepalive,
        (self as { clock?: ActorClock }).clock,
      );
    },
    'leave origin keepalive': ({ context, system }) => runtimeOf(system, context.server).originKeepalive?.leave(),
    'stop followed stream': stopFollowedStream,
  },
});
