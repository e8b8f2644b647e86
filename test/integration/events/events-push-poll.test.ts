/**
 * Events subscriptions (SEP-3415, experimental) against servers/events-server.ts, a 2026-07-28
 * server written from the SEP: poll and push deliver every event once, in order; a frozen push
 * stream (heartbeats stop) is declared dead after twice its heartbeat and reopened with its
 * cursor, losing nothing; a server restart is followed by a resubscription with the cursor.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect } from '../../../src/connect.js';
import type { ServerHandle } from '../../../src/handle/server-handle.js';
import type { EventOccurrence, Subscription } from '../../../src/events/subscription.js';
import { startEventsServer, type EventsServer } from '../../../servers/events-server.js';

let server: EventsServer | undefined;
let handle: ServerHandle | undefined;

afterEach(async () => {
  await handle?.close();
  await server?.close();
  handle = undefined;
  server = undefined;
});

async function start(heartbeatMs = 200): Promise<{ server: EventsServer; handle: ServerHandle }> {
  server = await startEventsServer({ heartbeatMs, nextPollMs: 50 });
  handle = await connect({ url: server.url, protocolVersion: 'modern', keepalive: false, requestTimeoutMs: 2_000 });
  return { server, handle };
}

function collect(subscription: Subscription): EventOccurrence[] {
  const got: EventOccurrence[] = [];
  subscription.on('event', (event) => {
    got.push(event);
  });
  return got;
}

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const ids = (events: EventOccurrence[]) => events.map((e) => e.eventId);

describe('events: push', () => {
  it('lists the event types, and auto picks push when offered', async () => {
    const { handle } = await start();
    expect(handle.events.offered()).toBe(true);
    expect((await handle.events.list()).map((e) => e.name)).toEqual(['ticks', 'cursorless']);
    const subscription = await handle.events.subscribe({ name: 'ticks' });
    expect(subscription.mode).toBe('push');
  });

  it('delivers events as they happen, each once', async () => {
    const { server, handle } = await start();
    const subscription = await handle.events.subscribe({ name: 'ticks', mode: 'push' });
    const got = collect(subscription);
    await until(() => subscription.status().state === 'streaming' && server.openStreams() === 1, 'the stream');
    await until(() => subscription.status().cursor !== null, 'the active confirmation');
    for (let i = 0; i < 5; i++) server.emit('ticks');
    await until(() => got.length === 5, '5 events');
    expect(ids(got)).toEqual(['evt_1', 'evt_2', 'evt_3', 'evt_4', 'evt_5']);
    expect(subscription.status().cursor).toBe('c-5');
  });

  it('a frozen stream (heartbeats stop) is reopened with its cursor after 2× the heartbeat: 0 lost, 0 twice', async () => {
    const { server, handle } = await start(100);
    const subscription = await handle.events.subscribe({
      name: 'ticks',
      mode: 'push',
      policy: { heartbeatMs: 100, backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } },
    });
    const got = collect(subscription);
    await until(() => subscription.status().cursor !== null, 'the active confirmation');
    server.emit('ticks');
    await until(() => got.length === 1, 'the first event');
    server.freezeStreams();
    // Produced while the stream is frozen: the client hears nothing of them on that stream.
    server.emit('ticks');
    server.emit('ticks');
    await until(() => got.length === 3, 'the events of the silence, after the reopen');
    expect(ids(got)).toEqual(['evt_1', 'evt_2', 'evt_3']);
    expect(server.count('events/stream')).toBe(2);
    const reopen = server.requests.filter((r) => r.method === 'events/stream')[1]!;
    expect(reopen.params['cursor']).toBe('c-1');
  });

  it('a server restart: the stream is opened again with the cursor, 0 lost', async () => {
    const { server, handle } = await start();
    const subscription = await handle.events.subscribe({
      name: 'ticks',
      mode: 'push',
      policy: { backoff: { initialMs: 10, maxMs: 100, factor: 2, jitter: 0 } },
    });
    const got = collect(subscription);
    await until(() => subscription.status().cursor !== null, 'the active confirmation');
    server.emit('ticks');
    await until(() => got.length === 1, 'the first event');
    await server.restart({ forget: true });
    server.emit('ticks');
    server.emit('ticks');
    await until(() => got.length === 3, 'the events after the restart');
    expect(ids(got)).toEqual(['evt_1', 'evt_2', 'evt_3']);
  });

  it('a cursorless type is never replayed from a cursor', async () => {
    const { server, handle } = await start(100);
    const subscription = await handle.events.subscribe({
      name: 'cursorless',
      mode: 'push',
      policy: { heartbeatMs: 100, backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } },
    });
    await until(() => server.openStreams() === 1, 'the stream');
    server.freezeStreams();
    await until(() => server.count('events/stream') === 2, 'the reopen');
    const cursors = server.requests.filter((r) => r.method === 'events/stream').map((r) => r.params['cursor']);
    expect(cursors).toEqual([null, null]);
    expect(subscription.status().cursor).toBeNull();
  });
});

describe('events: poll', () => {
  it('drains at once on hasMore, then waits nextPollMs; in order, once', async () => {
    server = await startEventsServer({ nextPollMs: 50, maxEvents: 2 });
    handle = await connect({ url: server.url, protocolVersion: 'modern', keepalive: false, requestTimeoutMs: 2_000 });
    const subscription = await handle.events.subscribe({ name: 'ticks', mode: 'poll', policy: { pollFloorMs: 20 } });
    const got = collect(subscription);
    await until(() => subscription.status().cursor === 'c-0', 'the bootstrap poll');
    for (let i = 0; i < 5; i++) server.emit('ticks');
    await until(() => got.length === 5, '5 events');
    expect(ids(got)).toEqual(['evt_1', 'evt_2', 'evt_3', 'evt_4', 'evt_5']);
    // Bootstrap, then 3 polls drain 2+2+1 (hasMore twice) without waiting in between.
    const polls = server.requests.filter((r) => r.method === 'events/poll').map((r) => r.params['cursor']);
    expect(polls.slice(0, 1)).toEqual([null]);
    expect(polls).toContain('c-2');
    expect(polls).toContain('c-4');
  });

  it('backs off on 429 and goes on', async () => {
    server = await startEventsServer({ nextPollMs: 20 });
    handle = await connect({ url: server.url, protocolVersion: 'modern', keepalive: false, requestTimeoutMs: 2_000 });
    const subscription = await handle.events.subscribe({
      name: 'ticks',
      mode: 'poll',
      policy: { pollFloorMs: 20, backoff: { initialMs: 10, maxMs: 50, factor: 2, jitter: 0 } },
    });
    const got = collect(subscription);
    await until(() => subscription.status().cursor === 'c-0', 'the bootstrap poll');
    server.rateLimit(2);
    server.emit('ticks');
    await until(() => got.length === 1, 'the event after the 429s', 15_000);
    expect(ids(got)).toEqual(['evt_1']);
  });

  it('truncated: the gap is told and the fresh cursor kept', async () => {
    server = await startEventsServer({ nextPollMs: 20 });
    handle = await connect({ url: server.url, protocolVersion: 'modern', keepalive: false, requestTimeoutMs: 2_000 });
    const subscription = await handle.events.subscribe({ name: 'ticks', mode: 'poll', policy: { pollFloorMs: 20 } });
    const gaps: Array<string | null> = [];
    subscription.on('gap', ({ cursor }) => {
      gaps.push(cursor);
    });
    await until(() => subscription.status().cursor === 'c-0', 'the bootstrap poll');
    server.emit('ticks');
    server.emit('ticks');
    server.truncateNext();
    await until(() => gaps.length === 1, 'the gap');
    expect(gaps).toEqual(['c-2']);
    expect(subscription.status().gaps).toBe(1);
  });

  it('an unknown event type is a ConfigError naming it', async () => {
    const { handle } = await start();
    await expect(handle.events.subscribe({ name: 'nope' })).rejects.toThrow(/no event type 'nope'/);
    await expect(handle.events.subscribe({ name: 'cursorless', mode: 'webhook' })).rejects.toThrow(/not webhook/);
  });

  it('close() ends the iterator', async () => {
    const { server, handle } = await start();
    const subscription = await handle.events.subscribe({ name: 'ticks', mode: 'poll', policy: { pollFloorMs: 20 } });
    await until(() => subscription.status().cursor === 'c-0', 'the bootstrap poll');
    server.emit('ticks');
    const seen: string[] = [];
    for await (const event of subscription) {
      seen.push(event.eventId);
      break;
    }
    expect(seen).toEqual(['evt_1']);
    expect(subscription.status().state).toBe('closed');
  });
});
