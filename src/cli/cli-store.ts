/**
 * The CLI's store: one `fileStore` per user, shared by every `mcp-supervisor` run on the machine
 * (and by agents given the same path). Logins, era verdicts and shareable tool lists outlive the
 * run, and two runs renewing one login take turns instead of spending a refresh token twice.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileStore } from '../store/file-store.js';
import type { Store } from '../store/types.js';

/** `--store`; otherwise `$MCP_SUPERVISOR_STORE`, otherwise `~/.mcp-supervisor/store.json`. */
export function storeFile(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return flag || env['MCP_SUPERVISOR_STORE'] || join(homedir(), '.mcp-supervisor', 'store.json');
}

/** Nothing touches the file until a server reads or writes something. */
export function cliStore(flag: string | undefined): Store {
  return fileStore(storeFile(flag));
}
