/**
 * The store side of events: a subscription starts from the cursor and the dedupe window the store
 * holds (another process wrote them), drops the events of that window when the server replays
 * them, and lists itself for `resume()`; `close()` forgets it.
 */
import { afterEach, expect, it } from 'vitest';
import { createSupervisor, type Supervisor } from '../../../src/supervisor/supervisor.js';
import { memoryStore } from '../../../src/store/index.js';
import type { Store } from '../../../src/store/types.js';
import { startEventsServer, type EventsServer } from '../../../servers/events-server.js';
import type { EventOccurrence } from '../../../src/events/subscription.js';

let server: EventsServer | undefined;
let sup: Supervisor | undefined;

afterEach(async () => {
  await sup?.stop();
  await server?.close();
});

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A memory store that remembers the keys written to it (a store cannot list its keys). */
function recordingStore(): { store: Store; keys: Set<string> } {
  const base = memoryStore();
  const keys = new Set<string>();
  const store: Store = {
    name: base.name,
    get: (key) => base.get(key),
    set: (key, value, options) => {
      keys.add(key);
      return base.set(key, value, options);
    },
    delete: (key, options) => base.delete(key, options),
    lock: (name, options) => base.lock(name, options),
  };
  return { store, keys };
}

it('starts from the stored cursor and window: a replayed event of the window is dropped, the rest delivered once', async () => {
  server = await startEventsServer({ nextPollMs: 20 });
  for (let i = 0; i < 3; i++) server.emit('ticks');
  const { store, keys } = recordingStore();
  sup = createSupervisor({
    servers: { ev: { url: server.url, protocolVersion: 'modern', keepalive: false, requestTimeoutMs: 2_000 } },
    store,
  });
  await sup.start();
  // A first subscription writes the keys; its position is then set back as another process left it:
  // the cursor before evt_1, with evt_1 already given to the consumer.
  const first = await sup.events.subscribe('ev', { name: 'ticks', mode: 'poll', policy: { pollFloorMs: 20 } });
  await until(() => first.status().cursor === 'c-3', 'the bootstrap');
  await first.flush();
  const id = first.id;
  const listKey = [...keys].find((key) => key.includes('events:list:'))!;
  await first.close();
  expect((await store.get(listKey))?.value, 'close() forgets the subscription').toEqual({ subscriptions: [] });
  const positionKey = listKey.replace(':list:', ':position:') + `:${id}`;
  await store.set(positionKey, { cursor: 'c-0', seen: ['evt_1'] });

  const again = await sup.events.subscribe('ev', { name: 'ticks', mode: 'poll', policy: { pollFloorMs: 20 } });
  const got: EventOccurrence[] = [];
  again.on('event', (event) => {
    got.push(event);
  });
  await until(() => again.status().cursor === 'c-3', 'the replay');
  expect(got.map((e) => e.eventId)).toEqual(['evt_2', 'evt_3']);
  expect(again.status()).toMatchObject({ delivered: 2, duplicates: 1 });
  await again.flush();
  expect((await store.get(positionKey))?.value).toEqual({ cursor: 'c-3', seen: ['evt_1', 'evt_2', 'evt_3'] });
  expect((await store.get<{ subscriptions: unknown[] }>(listKey))?.value.subscriptions).toHaveLength(1);
});
