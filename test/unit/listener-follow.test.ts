/**
 * The listener's stream is followed by actions, not a child actor (src/runtime/actors/listener-actors.ts):
 * XState runs no exit action when an actor is stopped, so a listener stopped by its parent (the
 * connection leaving `ready`) must still close its stream. Once the stream opened, the listener
 * hands it over and is stopped (NOTHING_TO_LISTEN): the parent closes it (`stop followed stream`)
 * and hears its end (LISTEN_WANTED with the cursor). A real GET stream to a real server.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assign, createActor, setup, spawnChild, stopChild, transition, type AnyEventObject } from 'xstate';
import type { ConnectionHost, ListenerOpening } from '../../machines/connection-host.js';
import {
  cursorChange,
  endsOpenStream,
  listenerMachine,
  type ListenerContext,
  type ListenerEvent,
} from '../../machines/listener.machine.js';
import { followStreamActions, stopFollowedStream } from '../../src/runtime/actors/listener-actors.js';
import { registerRuntimes } from '../../src/runtime/actors/runtime-registry.js';

let server: Server;
let url: string;
let open = 0;
let seen = 0;
const responses: ServerResponse[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    open++;
    seen++;
    req.socket.on('close', () => open--);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(': open\n\n');
    responses.push(res);
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

/** A parent that hands over like the connection: NOTHING_TO_LISTEN stops the listener, leaving `ready` closes the stream. */
const parent = setup({
  types: { context: {} as { heard: AnyEventObject[] } },
  actors: { listener: listenerMachine.provide({ actions: followStreamActions }) },
  actions: { 'stop followed stream': stopFollowedStream },
}).createMachine({
  context: { heard: [] },
  initial: 'ready',
  states: {
    ready: {
      entry: spawnChild('listener', { id: 'listener', input: { server: 'docs' } }),
      exit: [stopChild('listener'), 'stop followed stream'],
      on: {
        LEAVE: 'away',
        NOTHING_TO_LISTEN: { actions: stopChild('listener') },
        LISTEN_WANTED: { actions: assign({ heard: ({ context, event }) => [...context.heard, event] }) },
      },
    },
    away: {},
  },
});

function start() {
  const actor = createActor(parent);
  registerRuntimes(actor.system, host);
  actor.start();
  return actor;
}

describe('listener: following the stream without a child actor', () => {
  it('a listener stopped while its stream opens closes it', async () => {
    const actor = start();
    const listener = actor.getSnapshot().children.listener!;
    expect(listener.getSnapshot().value).toEqual({ connected: 'opening' });
    const before = seen;
    actor.send({ type: 'LEAVE' });
    expect(listener.getSnapshot().status).toBe('stopped');
    // The GET reached the server, and was closed as its headers arrived.
    await expect.poll(() => seen).toBe(before + 1);
    await expect.poll(() => open).toBe(0);
    actor.stop();
  });

  it('an open stream is handed over: no listener while it is open, leaving ready closes it', async () => {
    const actor = start();
    await expect.poll(() => open).toBe(1);
    await expect.poll(() => actor.getSnapshot().children.listener).toBeUndefined();
    actor.send({ type: 'LEAVE' });
    await expect.poll(() => open).toBe(0);
    expect(actor.getSnapshot().context.heard).toEqual([]);
    actor.stop();
  });

  it('the end of a handed-over stream comes back to the parent with its cursor', async () => {
    const actor = start();
    await expect.poll(() => open).toBe(1);
    await expect.poll(() => actor.getSnapshot().children.listener).toBeUndefined();
    responses.at(-1)!.end();
    await expect
      .poll(() => actor.getSnapshot().context.heard)
      .toEqual([
        {
          type: 'LISTEN_WANTED',
          resume: {
            lastEventId: undefined,
            retryMs: undefined,
            stalledAttempts: 0,
            reopens: 0,
            progressed: true,
            stable: false,
            error: undefined,
          },
        },
      ]);
    actor.stop();
  });
});

describe('a handed-over stream takes its events as the listener takes them', () => {
  // The listener's own `connected.streaming`, beside what the runtime does for a stream it follows
  // (`cursorChange`, `endsOpenStream`): a new effect in the machine that the follower lacks fails here.
  const context: ListenerContext = {
    server: 'docs',
    lastEventId: 'e1',
    retryMs: undefined,
    stalledAttempts: 2,
    reopens: 1,
    progressed: false,
    opened: true,
    unavailableStatus: undefined,
    lastError: undefined,
  };
  const events: ListenerEvent[] = [
    { type: 'EVENT_ID', id: 'e2' },
    { type: 'RETRY', ms: 1500 },
    { type: 'STREAM_PROGRESSED' },
    { type: 'STREAM_ENDED' },
    { type: 'STREAM_FAILED', error: 'socket hang up' },
  ];
  it.each(events.map((event) => [event.type, event] as const))('%s', (_, event) => {
    const streaming = listenerMachine.resolveState({ value: { connected: 'streaming' }, context });
    const [next] = transition(listenerMachine, streaming, event);
    expect(!next.matches('connected')).toBe(endsOpenStream(event));
    if (!endsOpenStream(event)) expect(next.context).toEqual({ ...context, ...cursorChange(event) });
  });
});
