/**
 * The keys of what a supervisor keeps in its store besides credentials: era verdicts, tool
 * catalogs, task references, opt-in sessions. A server is named by its identity (URL, or command,
 * arguments and directory), never by its display name, and hashed: a URL may carry a secret in
 * its query, and a key is visible to whoever lists the store.
 */
import { createHash } from 'node:crypto';

const PREFIX = 'mcp-supervisor:';

/** A list's `cacheScope` (SEP-2549): `public` is shared by all, `private` only within one authorization context. */
export type ListScope = 'public' | 'private';

/** A short, stable digest of an identity (base64url of SHA-256, 128 bits). */
export function digestOf(identity: string): string {
  return createHash('sha256').update(identity).digest('base64url').slice(0, 22);
}

export const stateKeys = {
  /** The era a server was last found to speak. */
  era: (server: string) => `${PREFIX}era:${server}`,
  /** A 2025-era session kept for `resumeSession`. */
  session: (server: string) => `${PREFIX}session:${server}`,
  /** A server's tool list: a public one, or a private one under the authorization context it was listed in. */
  tools: (server: string, authContext?: string) =>
    authContext === undefined ? `${PREFIX}tools:${server}` : `${PREFIX}tools:${server}:${digestOf(authContext)}`,
  /** One task's reference, by its id. */
  task: (server: string, taskId: string) => `${PREFIX}task:${server}:${digestOf(taskId)}`,
  /** The task references of one server still worth resuming (an index: the store cannot list keys). */
  tasks: (server: string) => `${PREFIX}tasks:${server}`,
};
