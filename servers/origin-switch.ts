/**
 * A fault switch for a whole origin: a TCP front (node:net) on a fixed loopback port that passes
 * connections to a real MCP server behind it, or plays an outage. Test fixture code only.
 *
 * - `up`: every connection is piped to the server behind;
 * - `down`: the port is closed (connections are refused) and open sockets are destroyed;
 * - `black-hole`: connections are accepted and never answered.
 *
 * It counts the connections it accepted and, with `countAttempts`, the MCP connection attempts
 * (`initialize` and `server/discover` requests seen by the server behind are counted there).
 */
import net from 'node:net';

export type OriginMode = 'up' | 'down' | 'black-hole';

export interface OriginSwitch {
  readonly port: number;
  readonly origin: string;
  mode(): OriginMode;
  set(mode: OriginMode): Promise<void>;
  /** Connections accepted since the start (TCP). */
  accepted(): number;
  close(): Promise<void>;
}

/** Fronts `target` (host:port of the real server) on a free loopback port. */
export async function startOriginSwitch(target: { host?: string; port: number }): Promise<OriginSwitch> {
  const sockets = new Set<net.Socket>();
  let current: OriginMode = 'up';
  let accepted = 0;
  let server: net.Server | undefined;

  const onConnection = (socket: net.Socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (current === 'black-hole') return; // accepted, never answered
    const upstream = net.connect(target.port, target.host ?? '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => socket.destroy());
    socket.pipe(upstream).pipe(socket);
  };

  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const next = net.createServer(onConnection);
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        server = next;
        resolve((next.address() as net.AddressInfo).port);
      });
    });
  const stopListening = async () => {
    const closing = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };

  const port = await listen(0);
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    mode: () => current,
    async set(mode) {
      if (mode === current) return;
      const wasDown = current === 'down';
      current = mode;
      if (mode === 'down') return stopListening();
      // Into or out of a black hole: the connections of the old mode end.
      for (const socket of sockets) socket.destroy();
      if (wasDown) await listen(port);
    },
    accepted: () => accepted,
    close: stopListening,
  };
}
