/**
 * A 2026-07-28 connection holds no listener actor while there is nothing to listen to (a server
 * that offers no list changes, no resource subscribed, no task watched): the listener child is
 * started when something is wanted (LISTEN_WANTED), and stops again when nothing is, or once the
 * listen is open (it hands the stream over: listener.machine.ts). What it listens to still
 * arrives, across a reconnect too. A real v2 server over HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyActorRef } from 'xstate';
import { createSupervisor, type ServerHandle, type Supervisor } from '../../../src/index.js';
import { CONFIG_URI, startV2Server, type V2Server } from './v2-server.js';

let server: V2Server | undefined;
let supervisor: Supervisor | undefined;
afterEach(async () => {
  await supervisor?.stop().catch(() => {});
  await server?.close();
  supervisor = server = undefined;
});

const FAST_RESTART = { backoff: { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 } };

type Seen = V2Server['seen'][number];
const method = (r: Seen) => (r.body as { method?: string } | undefined)?.method;
const listens = (s: V2Server) => s.seen.filter((r) => method(r) === 'subscriptions/listen');
const filterOf = (r: Seen | undefined) => (r?.body as { params: { notifications: unknown } }).params.notifications;

/** A supervisor of one v2 server, and the listener actors it ever started (seen through `inspect`). */
async function supervise(
  url: string,
): Promise<{ handle: ServerHandle; listeners: () => number; started: () => number }> {
  const actors = new Set<AnyActorRef>();
  supervisor = createSupervisor({
    servers: { v2: { url, keepalive: false, restart: FAST_RESTART, requestTimeoutMs: 5_000 } },
    inspect: (event) => {
      const actor = event.actorRef as AnyActorRef;
      if (event.type === '@xstate.actor' && actor.id === 'listener') actors.add(actor);
    },
  });
  await supervisor.start();
  const listeners = () => [...actors].filter((actor) => actor.getSnapshot().status === 'active').length;
  return { handle: supervisor.server('v2'), listeners, started: () => actors.size };
}

describe('the listener child of a 2026-07-28 connection', () => {
  it('is not there while nothing is listened to; a subscription starts it, with its updates, across a reconnect; unsubscribing stops it', async () => {
    server = await startV2Server('modern', 0, 'v2-quiet', { listChanged: false });
    const { handle, listeners, started } = await supervise(server.url);
    expect(handle.status()).toMatchObject({ state: 'ready', era: 'modern' });
    await expect.poll(listeners).toBe(0);
    expect(listens(server)).toEqual([]);

    const updates: unknown[] = [];
    handle.on('resourceUpdated', (u) => updates.push(u));
    await handle.subscribeResource(CONFIG_URI);
    expect(started()).toBeGreaterThanOrEqual(1);
    // The listen open, the listener handed it over: no actor while it is simply open.
    await expect.poll(listeners).toBe(0);
    expect(filterOf(listens(server).at(-1))).toEqual({ resourceSubscriptions: [CONFIG_URI] });
    server.resourceUpdated(CONFIG_URI);
    await expect.poll(() => updates.length).toBe(1);

    // A new connection (new discovery) starts a listener with the subscription at once.
    const before = listens(server).length;
    await handle.reconnect();
    await expect.poll(() => handle.status().state).toBe('ready');
    await expect.poll(() => listens(server!).length).toBe(before + 1);
    expect(filterOf(listens(server).at(-1))).toEqual({ resourceSubscriptions: [CONFIG_URI] });
    await expect.poll(listeners).toBe(0);
    await expect
      .poll(() => {
        server!.resourceUpdated(CONFIG_URI);
        return updates.length;
      })
      .toBeGreaterThan(1);

    await handle.unsubscribeResource(CONFIG_URI);
    await expect.poll(listeners).toBe(0);
  });
});
