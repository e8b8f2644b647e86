/**
 * Picks and builds the transport a server config asks for. The one place that knows which
 * transports exist.
 */
import type { ServerConfig } from '../config.js';
import { ConfigError } from '../protocol/errors.js';
import { StreamableHttpTransport } from './http.js';
import type { Timers, Transport, TransportSink } from './transport.js';
import type { ConfiguredTransport } from '../../machines/connection.machine.js';

export interface TransportContext {
  sink: TransportSink;
  timers?: Timers | undefined;
}

/** Throws a ConfigError for configs whose transport this build cannot run. */
export function assertTransportSupported(config: ServerConfig): void {
  if (config.kind === 'command' || config.type === 'sse') {
    const what = config.kind === 'command' ? 'stdio servers (`command`)' : "legacy HTTP+SSE servers (type 'sse' or a URL ending in /sse)";
    throw new ConfigError(`invalid configuration: servers.${config.name}: ${what} are not supported yet`, [
      { path: `servers.${config.name}`, message: 'transport not supported yet' },
    ]);
  }
}

/**
 * Builds the transport of `kind`: the connection machine decides it (`auto` opens Streamable
 * HTTP first and asks for `sse` after a fallback).
 */
export function createTransport(config: ServerConfig, context: TransportContext, kind: ConfiguredTransport = config.type): Transport {
  assertTransportSupported(config);
  if (config.kind === 'command') throw new Error('unreachable: stdio is refused above');
  if (kind === 'sse' || kind === 'stdio') {
    throw new ConfigError(`invalid configuration: servers.${config.name}: the ${kind} transport is not available in this build`, [{ path: `servers.${config.name}`, message: `${kind} not available` }]);
  }
  return new StreamableHttpTransport({
    url: config.url,
    server: config.name,
    headers: config.headers,
    requestTimeoutMs: config.requestTimeoutMs,
    maxMessageBytes: config.maxMessageBytes,
    sink: context.sink,
    timers: context.timers,
  });
}
