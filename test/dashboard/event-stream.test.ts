/**
 * A stalled browser never grows the agent's memory: events for a reader that stopped reading wait
 * in a bounded queue, the oldest are dropped past the bound, and once the reader reads again it
 * gets a resync (a fresh snapshot) instead of what it missed. Real sockets: a node:http server and
 * a client socket that is paused.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { EventStream, frame } from '../../src/dashboard/event-stream.js';

let server: Server | undefined;
let socket: Socket | undefined;
afterEach(async () => {
  socket?.destroy();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = socket = undefined;
});

it('bounds what waits for a stalled reader, drops the oldest, and resyncs once it reads again', async () => {
  const limit = 64 * 1024;
  let stream!: EventStream;
  let response!: ServerResponse;
  const opened = new Promise<void>((resolve) => {
    server = createServer((_request, res) => {
      response = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      stream = new EventStream(res, () => frame('snapshot', { fresh: true }), { maxQueuedBytes: limit });
      resolve();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server!.address() as AddressInfo;
  let received = '';
  socket = connect(port, '127.0.0.1', () => socket!.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  await opened;
  socket.pause(); // the browser stops reading

  // 32 MB of events: far more than any socket buffer holds.
  const event = frame('rows', { filler: 'x'.repeat(1000) });
  for (let i = 0; i < 32_000; i++) {
    stream.send(event);
    expect(stream.queued).toBeLessThanOrEqual(limit + event.length);
  }
  expect(stream.dropped).toBeGreaterThan(20_000);
  // What node holds for the socket: one write past its high-water mark at most, not the 32 MB.
  expect(response.writableLength).toBeLessThan(limit + 2 * event.length + response.writableHighWaterMark);

  socket.resume(); // it reads again: what it missed is replaced by a fresh snapshot
  await expect.poll(() => received.includes('event: resync')).toBe(true);
  await expect.poll(() => received.includes('"fresh":true')).toBe(true);
  expect(stream.resyncs).toBe(1);
  // Afterwards events flow again.
  stream.send(frame('rows', { after: 'resync' }));
  await expect.poll(() => received.includes('"after":"resync"')).toBe(true);
});
