/** Every machine by name, for diagrams and docs. */
import { connectionMachine } from '../machines/connection.machine.js';
import { keepaliveMachine } from '../machines/keepalive.machine.js';
import { listenerMachine } from '../machines/listener.machine.js';
import { sseFallbackMachine } from '../machines/sse-fallback.machine.js';
import { supervisorMachine } from '../machines/supervisor.machine.js';

export const MACHINES = {
  connection: connectionMachine,
  listener: listenerMachine,
  keepalive: keepaliveMachine,
  'sse-fallback': sseFallbackMachine,
  supervisor: supervisorMachine,
} as const;

export type MachineName = keyof typeof MACHINES;
