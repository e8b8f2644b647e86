/**
 * The gateway over stdio: what a host runs as a `command`. The SDK's serveStdio negotiates the
 * era of the connection (an `initialize` session, or 2026-07-28 per-request envelopes).
 */
import type { Readable, Writable } from 'node:stream';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { Gateway } from './gateway.js';

export interface StdioService {
  close(): Promise<void>;
  /** Resolves when the host closed the connection (stdin ended). */
  closed: Promise<void>;
}

export function serveGatewayStdio(
  gateway: Gateway,
  streams: { stdin?: Readable; stdout?: Writable } = {},
  onerror?: (error: Error) => void,
): StdioService {
  let ended!: () => void;
  const closed = new Promise<void>((resolve) => (ended = resolve));
  const transport = new StdioServerTransport(streams.stdin, streams.stdout);
  const handle = serveStdio(
    () => {
      const server = gateway.createServer();
      gateway.sessions.add(server);
      server.onclose = () => gateway.sessions.remove(server);
      return server;
    },
    { transport, onerror },
  );
  (streams.stdin ?? process.stdin).once('end', () => ended());
  return { close: () => handle.close(), closed };
}
