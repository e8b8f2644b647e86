/**
 * `connect()`: one server, as a supervisor of one, with the same recovery and restarts.
 */
import type { ServerConfigInput } from './config/server-config.js';
import { ConnectionClosedError } from './core/errors.js';
import type { ServerHandle } from './handle/server-handle.js';
import { Supervisor, type SupervisorOptions } from './supervisor/supervisor.js';

export interface ConnectOptions extends Omit<SupervisorOptions, 'servers'> {
  /** The server's name in status, errors and events; defaults to the URL's host. */
  name?: string;
}

/** `connect(config)` without options: one shared object, never written to. */
const NO_OPTIONS: ConnectOptions = Object.freeze({});

/**
 * Resolves with a ready handle. When the first attempt fails, rejects with its typed error
 * (TransportError, UnsupportedProtocolVersionError, …) and leaves nothing running.
 * `handle.close()` ends the session and stops the supervisor.
 */
export async function connect(config: ServerConfigInput, options: ConnectOptions = NO_OPTIONS): Promise<ServerHandle> {
  const name = options.name ?? defaultName(config);
  // The caller's options as they are, the server apart: a merged copy (and the one-entry record
  // keyed by this server's name, a hidden class of its own on Node 20) was kept for the connection's life.
  const supervisor = new Supervisor(options as SupervisorOptions, { [name]: config });
  await supervisor.start();
  const handle = supervisor.server(name);
  const status = handle.status();
  if (status.state !== 'ready') {
    const failure = supervisor.lastFailureOf(name);
    await supervisor.stop();
    throw (
      failure ?? new ConnectionClosedError(`could not connect: ${status.lastError ?? status.state}`, { server: name })
    );
  }
  // For a supervisor of one, closing the server stops the whole supervisor.
  const close = handle.close.bind(handle);
  handle.close = async () => {
    await close();
    await supervisor.stop();
  };
  return handle;
}

function defaultName(config: ServerConfigInput): string {
  if ('url' in config && typeof config.url === 'string') {
    try {
      return new URL(config.url).host;
    } catch {
      return 'server';
    }
  }
  if ('command' in config && typeof config.command === 'string') return config.command;
  return 'server';
}
