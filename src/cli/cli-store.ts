/**
 * The CLI's store: one `fileStore` per user, shared by every `mcp-supervisor` run on the machine
 * (and by agents given the same path), or Redis for replicas of `serve` on many machines
 * (`--store redis://…`). Logins, era verdicts, shareable tool lists and the gateway's host
 * sessions outlive the run, and two runs renewing one login take turns instead of spending a
 * refresh token twice.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileStore } from '../store/file-store.js';
import { redisStore } from '../store/redis/redis-store.js';
import type { Store } from '../store/types.js';

/** `--store`; otherwise `$MCP_SUPERVISOR_STORE`, otherwise `~/.mcp-supervisor/store.json`. */
export function storeFile(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return flag || env['MCP_SUPERVISOR_STORE'] || join(homedir(), '.mcp-supervisor', 'store.json');
}

/** A `redis://` or `rediss://` URL is Redis (the optional `redis` package); anything else a file. */
export function isRedisUrl(location: string): boolean {
  return /^rediss?:\/\//i.test(location);
}

/** Nothing touches the file, or connects to Redis, until a server reads or writes something. */
export function cliStore(flag: string | undefined): Store {
  const location = storeFile(flag);
  return isRedisUrl(location) ? redisStore({ url: location }) : fileStore(location);
}
