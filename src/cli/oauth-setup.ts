/**
 * OAuth for the CLI. A config file can only hold the data half of the built-in OAuth client's
 * options; the CLI supplies the rest for each such server: the token file of earlier versions
 * (logins now live in the CLI's store, cli-store.ts; the token file is read for a login the store
 * does not hold yet, so an upgrade needs no new sign-in), and for the authorization_code grant a
 * loopback listener that receives the browser's redirect (RFC 8252 §7.3). Servers with an
 * AuthProvider of their own are left alone.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  createLoopbackRedirect,
  defaultOpenBrowser,
  type LoopbackRedirect,
  type LoopbackRedirectOptions,
} from '../auth/loopback-redirect.js';
import type { OAuthClientOptions } from '../auth/options.js';
import { isAuthProvider, type AuthConfig } from '../auth/resolve-provider.js';
import { fileTokenStore } from '../auth/token-store.js';
import type { TokenStore } from '../auth/types.js';
import { ConfigError } from '../core/errors.js';
import { UsageError, type ServerMap } from './load-config.js';

export interface AuthOptions {
  /** The token file of earlier versions (read only while the store lacks a login): `--token-file`; otherwise `$MCP_SUPERVISOR_TOKEN_FILE`, otherwise `~/.mcp-supervisor/tokens.json`. */
  tokenFile: string | undefined;
  /** Open the authorization URL in the system browser (it is printed either way). */
  openBrowser: boolean;
  /** Shows a line to the user (stderr: stdout carries the command's JSON). */
  print: (line: string) => void;
}

export interface PreparedAuth {
  servers: ServerMap;
  /** Closes the loopback listeners. */
  close: () => Promise<void>;
}

function defaultTokenFile(env: NodeJS.ProcessEnv = process.env): string {
  return env['MCP_SUPERVISOR_TOKEN_FILE'] || join(homedir(), '.mcp-supervisor', 'tokens.json');
}

/** Returns the servers with their OAuth options completed; the input map is not changed. */
export async function prepareAuth(servers: ServerMap, options: AuthOptions): Promise<PreparedAuth> {
  const listeners: LoopbackRedirect[] = [];
  const close = async () => {
    await Promise.all(listeners.map((listener) => listener.close()));
  };
  // One store for every server: entries are keyed by the resource URL. Nothing touches the file
  // until a server loads or saves, so commands without OAuth servers never create it.
  let store: TokenStore | undefined;
  const sharedStore = () => (store ??= fileTokenStore(options.tokenFile ?? defaultTokenFile()));
  const prepared: ServerMap = {};
  try {
    for (const [name, config] of Object.entries(servers)) {
      const auth = ('auth' in config ? config.auth : undefined) as AuthConfig | undefined;
      if (auth === undefined || isAuthProvider(auth)) {
        prepared[name] = config;
        continue;
      }
      const oauth: OAuthClientOptions = { ...auth, store: auth.store ?? sharedStore() };
      if ((oauth.grant ?? 'authorization_code') === 'authorization_code' && !oauth.onRedirect) {
        const listener = await startListener(name, oauth.redirectUri, options);
        listeners.push(listener);
        oauth.redirectUri = listener.redirectUri;
        oauth.onRedirect = listener.onRedirect;
      }
      prepared[name] = { ...config, auth: oauth };
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { servers: prepared, close };
}

async function startListener(
  name: string,
  redirectUri: string | undefined,
  options: AuthOptions,
): Promise<LoopbackRedirect> {
  try {
    return await createLoopbackRedirect({
      ...loopbackAddress(name, redirectUri),
      ...(options.openBrowser ? { open: defaultOpenBrowser } : {}),
      print: (line) => options.print(`[${name}] ${line}`),
    });
  } catch (error) {
    // A busy port, mostly: say which server's redirectUri asked for it.
    if (error instanceof ConfigError) throw new UsageError(`servers.${name}.auth.redirectUri: ${error.message}`);
    throw error;
  }
}

/**
 * Where to listen. A configured loopback `redirectUri` (pre-registered with the authorization
 * server) is bound as written; without a port in it, any free port, which RFC 8252 §7.3 requires
 * servers to accept for loopback IP redirects. No `redirectUri`: a free port and `/callback`.
 */
function loopbackAddress(
  name: string,
  redirectUri: string | undefined,
): Pick<LoopbackRedirectOptions, 'host' | 'port' | 'path'> {
  if (redirectUri === undefined) return {};
  const url = new URL(redirectUri); // an absolute URL: checked when the config was loaded
  const host = url.hostname;
  if (
    url.protocol !== 'http:' ||
    (host !== '127.0.0.1' && host !== 'localhost') ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw new UsageError(
      `servers.${name}.auth.redirectUri: the CLI receives the browser's redirect on this machine, so it must be http://127.0.0.1[:port]/path or http://localhost[:port]/path without a query (or left out), not ${redirectUri}`,
    );
  }
  return { host, port: url.port === '' ? 0 : Number(url.port), path: url.pathname };
}
