/**
 * Who a server is for the store: what it is reached by (its URL; its command, arguments and
 * working directory), never its display name, so processes that name it differently share what
 * was learned of it, and two servers under one name do not. Hashed into keys (store/state-keys.ts).
 */
import type { ServerConfig } from '../../config/server-config.js';
import { digestOf } from '../../store/state-keys.js';

export function serverIdentity(config: ServerConfig): string {
  const identity =
    config.kind === 'url'
      ? `url ${config.url.href}`
      : `stdio ${JSON.stringify([config.command, config.args, config.cwd ?? ''])}`;
  return digestOf(identity);
}
