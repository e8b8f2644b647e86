/**
 * Picks and builds the transport a server config asks for. The one place that knows which
 * transports exist.
 */
import type { ServerConfig } from '../config.js';
import { ConfigError } from '../protocol/errors.js';
import { StreamableHttpTransport } from './http.js';
import type { Timers, Transport, TransportSink } from './transport.js';

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

/** `auto` starts as Streamable HTTP; the connection machine falls back to legacy SSE when told to. */
export function createTransport(config: ServerConfig, context: TransportContext): Transport {
  assertTransportSupported(config);
  if (config.kind === 'command') throw new Error('unreachable: stdio is refused above');
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
