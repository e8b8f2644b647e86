/** Every machine by name, for diagrams and docs. */
import { connectionMachine } from './connection.machine.js';
import { keepaliveMachine } from './keepalive.machine.js';
import { listenerMachine } from './listener.machine.js';
import { sseFallbackMachine } from './sse-fallback.machine.js';
import { supervisorMachine } from './supervisor.machine.js';

export const MACHINES = {
  connection: connectionMachine,
  listener: listenerMachine,
  keepalive: keepaliveMachine,
  'sse-fallback': sseFallbackMachine,
  supervisor: supervisorMachine,
} as const;

export type MachineName = keyof typeof MACHINES;
