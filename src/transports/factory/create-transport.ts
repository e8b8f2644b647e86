/**
 * Picks and builds the transport a server config asks for. The one place that knows which
 * transports exist.
 */
import type { CommandServerConfig, ServerConfig, UrlServerConfig } from '../../config/server-config.js';
import { ConfigError } from '../../core/errors.js';
import { StreamableHttpTransport } from '../http/streamable-http.js';
import { LegacySseTransport } from '../legacy-sse/legacy-sse.js';
import { StdioTransport } from '../stdio/stdio.js';
import type { Timers, Transport, TransportSink } from '../transport.js';
import type { ConfiguredTransport } from '../../../machines/connection.machine.js';
import type { AuthProvider } from '../../auth/types.js';
import type { HttpOptions } from '../http-credentials.js';

export interface TransportContext {
  sink: TransportSink;
  /** The server's auth provider (URL servers with `auth`); one per server, shared by its transports. */
  auth?: AuthProvider | undefined;
  timers?: Timers | undefined;
  /** Whether the server has completed a handshake before; until then a stdio start failure is fatal. */
  hasConnectedBefore?: (() => boolean) | undefined;
}

/** Builds a server's transports: `createTransport`, or a test's scripted stand-in (see SupervisorOptions). */
export type TransportFactory = (
  config: ServerConfig,
  context: TransportContext,
  kind: ConfiguredTransport,
) => Transport;

/**
 * Builds the transport of `kind`: the connection machine decides it (`auto` opens Streamable
 * HTTP first and asks for `sse` after a fallback).
 */
export function createTransport(
  config: ServerConfig,
  context: TransportContext,
  kind: ConfiguredTransport = config.type,
): Transport {
  if (config.kind === 'command') return createStdioTransport(config, context);
  if (kind === 'sse') return createLegacySseTransport(config, context);
  if (kind === 'stdio') {
    throw new ConfigError(
      `invalid configuration: servers.${config.name}.type: 'stdio' needs \`command\`, not \`url\``,
      [{ path: `servers.${config.name}.type`, message: "'stdio' needs `command`" }],
    );
  }
  return new StreamableHttpTransport(urlTransportOptions(config, context));
}

/** What both HTTP transports take from a URL server's config. */
function urlTransportOptions(config: UrlServerConfig, context: TransportContext): HttpOptions {
  return {
    url: config.url,
    server: config.name,
    headers: config.headers,
    requestTimeoutMs: config.requestTimeoutMs,
    maxMessageBytes: config.maxMessageBytes,
    sink: context.sink,
    auth: context.auth,
    timers: context.timers,
    secrets: config.secrets,
  };
}

/** The legacy HTTP+SSE (2024-11-05) transport for a URL server: `type: 'sse'`, or `auto` after a fallback. */
function createLegacySseTransport(config: ServerConfig, context: TransportContext): LegacySseTransport {
  if (config.kind === 'command')
    throw new ConfigError(`invalid configuration: servers.${config.name}: legacy SSE needs \`url\``, [
      { path: `servers.${config.name}.url`, message: 'required for sse' },
    ]);
  return new LegacySseTransport(urlTransportOptions(config, context));
}

/** A stdio server: one child process per connection attempt. */
function createStdioTransport(config: CommandServerConfig, context: TransportContext): StdioTransport {
  return new StdioTransport({
    server: config.name,
    command: config.command,
    args: config.args,
    env: config.env,
    cwd: config.cwd,
    maxMessageBytes: config.maxMessageBytes,
    shutdown: config.shutdown,
    stderr: config.stderr,
    sink: context.sink,
    hasConnectedBefore: context.hasConnectedBefore,
  });
}
