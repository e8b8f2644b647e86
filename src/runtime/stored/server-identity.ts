/**
 * Who a server is for the store: what it is reached by (its URL; its command, arguments and
 * working directory), never its display name, so processes that name it differently share what
 * was learned of it, and two servers under one name do not. Hashed into keys (store/state-keys.ts).
 */
import type { ServerConfig } from '../../config/server-config.js';
import { isAuthProvider } from '../../auth/resolve-provider.js';
import { digestOf } from '../../store/state-keys.js';

export function serverIdentity(config: ServerConfig): string {
  const identity =
    config.kind === 'url'
      ? `url ${config.url.href}`
      : `stdio ${JSON.stringify([config.command, config.args, config.cwd ?? ''])}`;
  return digestOf(identity);
}

/**
 * Whose requests these are, for lists a server marks private (`cacheScope: 'private'`: reused
 * only within one authorization context): the built-in OAuth client's credential, named by its
 * `auth.principal` and client as the credential's store key is. Unknown (undefined) for a server
 * without it (static headers, an AuthProvider of its own): its private lists are not stored.
 */
export function authorizationContext(config: ServerConfig): string | undefined {
  if (config.kind !== 'url' || config.auth === undefined || isAuthProvider(config.auth)) return undefined;
  const { principal, clientId, clientMetadataUrl } = config.auth;
  return `${principal ?? ''}|${clientId ?? clientMetadataUrl ?? ''}`;
}
