/** The pure machines, for diagrams, inspection and custom composition. */
import { connectionMachine } from './connection.machine.js';
import { keepaliveMachine } from './keepalive.machine.js';
import { listenerMachine } from './listener.machine.js';
import { sseFallbackMachine } from './sse-fallback.machine.js';
import { supervisorMachine } from './supervisor.machine.js';
import { subscriptionMachine } from './subscription.machine.js';
export {
  connectionMachine,
  CONNECTION_FACT_KINDS,
  CONNECTION_STATES,
  isEnded,
  type ConnectionFact,
  type ConnectionState,
  type ConnectionContext,
  type ConnectionEvent,
  type ConnectionInput,
  type ConnectionReport,
  type SessionInfo,
} from './connection.machine.js';
export { listenerMachine, type ListenerContext, type ListenerEvent, type ListenerReport } from './listener.machine.js';
export {
  supervisorMachine,
  type SupervisorContext,
  type SupervisorEvent,
  type SupervisorInput,
} from './supervisor.machine.js';
export * from './restart-policy.js';
export * from './stream-policy.js';
export {
  keepaliveMachine,
  type KeepaliveContext,
  type KeepaliveEvent,
  type KeepaliveInput,
  type KeepaliveSettings,
  type KeepaliveProof,
  type LivenessEvidence,
  type ProbeOutput,
} from './keepalive.machine.js';
export {
  sseFallbackMachine,
  type SseFallbackContext,
  type SseFallbackInput,
  type SseFallbackOutput,
} from './sse-fallback.machine.js';
/** Experimental (SEP-3415 draft): one events subscription, a child of its connection. */
export {
  subscriptionMachine,
  DEFAULT_SUBSCRIPTION_POLICY,
  type SubscriptionContext,
  type SubscriptionEvent,
  type SubscriptionInput,
  type SubscriptionPolicy,
} from './subscription.machine.js';

/** Every machine by name, for diagrams and docs. */
export const MACHINES = {
  connection: connectionMachine,
  listener: listenerMachine,
  keepalive: keepaliveMachine,
  'sse-fallback': sseFallbackMachine,
  supervisor: supervisorMachine,
  subscription: subscriptionMachine,
} as const;

export type MachineName = keyof typeof MACHINES;
