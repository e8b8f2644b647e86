/**
 * The listener's stream is followed by actions, not a child actor (src/runtime/actors/listener-actors.ts):
 * XState runs no exit action when an actor is stopped, so a listener stopped by its parent (the
 * connection leaving `ready`) must still close its stream. A real GET stream to a real server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActor, setup } from 'xstate';
import type { ConnectionHost, ListenerOpening } from '../../machines/connection-host.js';
import { listenerMachine } from '../../machines/listener.machine.js';
import { followStreamActions } from '../../src/runtime/actors/listener-actors.js';
import { registerRuntimes } from '../../src/runtime/actors/runtime-registry.js';

let server: Server;
let url: string;
let open = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    open++;
    req.socket.on('close', () => open--);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': open\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A host whose listening stream is a real GET: it ends when the body ends or is destroyed. */
function host(): ConnectionHost {
  const openListener = async (): Promise<ListenerOpening> => {
    const { body } = await request(url, { headers: { accept: 'text/event-stream' }, bodyTimeout: 0 });
    return {
      kind: 'open',
      read: () =>
        new Promise<void>((resolve) => {
          body
            .on('end', resolve)
            .on('error', () => resolve())
            .on('close', resolve)
            .resume();
        }),
      cancel: () => body.destroy(),
    };
  };
  return { openListener } as unknown as ConnectionHost;
}

const parent = setup({
  actors: { listener: listenerMachine.provide({ actions: followStreamActions }) },
}).createMachine({
  initial: 'ready',
  states: {
    ready: { invoke: { id: 'listener', src: 'listener', input: { server: 'docs' } }, on: { LEAVE: 'away' } },
    away: {},
  },
});

describe('listener: following the stream without a child actor', () => {
  it('a listener stopped by its parent closes its open stream', async () => {
    const actor = createActor(parent);
    registerRuntimes(actor.system, host);
    actor.start();
    await expect.poll(() => open).toBe(1);
    const listener = actor.getSnapshot().children.listener!;
    expect(listener.getSnapshot().value).toEqual({ connected: 'streaming' });
    actor.send({ type: 'LEAVE' });
    expect(listener.getSnapshot().status).toBe('stopped');
    await expect.poll(() => open).toBe(0);
    actor.stop();
  });

  it('a stopped root closes the stream of the listener it held', async () => {
    const actor = createActor(parent);
    registerRuntimes(actor.system, host);
    actor.start();
    await expect.poll(() => open).toBe(1);
    actor.stop();
    await expect.poll(() => open).toBe(0);
  });
});
