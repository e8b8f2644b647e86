/**
 * A task reference given to `handle.tasks.resume(ref)`: checked before anything is sent, so a
 * reference of another server or a damaged one is a ConfigError naming the field, never a
 * request to the wrong server. (The shape follows the tasks extension's serialized task
 * reference: who, which generation of the protocol, which task, what created it.)
 */
import type { Era } from '../../machines/connection.types.js';
import { ConfigError } from '../core/errors.js';
import { isObject } from '../core/is-object.js';
import type { TaskReference } from '../runtime/stored/stored-state.js';

function invalid(server: string, field: string, message: string): ConfigError {
  return new ConfigError(`[${server}] invalid task reference: ${field} ${message}`, [{ path: field, message }]);
}

/** The reference, checked against the server it is resumed on (its identity) and the era spoken now. */
export function checkReference(
  value: unknown,
  server: { name: string; identity: string; era: Era | undefined },
): TaskReference {
  const name = server.name;
  if (!isObject(value)) throw invalid(name, 'ref', 'must be a task reference (task.reference) or a task id');
  if (typeof value.taskId !== 'string' || value.taskId === '')
    throw invalid(name, 'ref.taskId', 'must be a non-empty string');
  if (value.era !== 'legacy' && value.era !== 'modern') throw invalid(name, 'ref.era', "must be 'legacy' or 'modern'");
  if (value.operation !== 'tools/call') throw invalid(name, 'ref.operation', "must be 'tools/call'");
  if (value.server !== server.identity)
    throw invalid(
      name,
      'ref.server',
      'names another server (a reference is resumed on the server that created the task)',
    );
  if (server.era !== undefined && value.era !== server.era)
    throw invalid(
      name,
      'ref.era',
      `is '${value.era}' but the server now speaks the ${server.era} era: the task is not its to answer`,
    );
  return {
    server: value.server,
    era: value.era,
    taskId: value.taskId,
    operation: 'tools/call',
    tool: typeof value.tool === 'string' ? value.tool : '',
    createdAt: typeof value.createdAt === 'string' ? value.createdAt : '',
  };
}
