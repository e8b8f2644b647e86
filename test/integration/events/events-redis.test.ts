/**
 * Redis-backed subscriptions move between processes: a replica subscribes and is given events,
 * then stops; another replica on the same Redis store starts every stored subscription with
 * `resume()` and goes on from the stored cursor — the events produced in between arrive, none twice.
 */
import { afterEach, expect, it } from 'vitest';
import { createSupervisor, type Supervisor } from '../../../src/supervisor/supervisor.js';
import { redisStore } from '../../../src/store/redis/index.js';
import type { EventOccurrence } from '../../../src/events/subscription.js';
import { startEventsServer, type EventsServer } from '../../../servers/events-server.js';
import { startRedisServer, type RedisServer } from '../../store/redis-server.js';

let server: EventsServer | undefined;
let redis: RedisServer | undefined;
const sups: Supervisor[] = [];

afterEach(async () => {
  for (const sup of sups.splice(0)) await sup.stop();
  await server?.close();
  await redis?.stop();
});

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function replica(url: string, prefix: string): Promise<Supervisor> {
  const sup = createSupervisor({
    servers: { ev: { url, protocolVersion: 'modern', keepalive: false, requestTimeoutMs: 2_000 } },
    store: redisStore({ url: redis!.url, prefix }),
  });
  sups.push(sup);
  await sup.start();
  return sup;
}

it('another replica resumes the stored subscriptions from their cursor: 0 lost, 0 twice', async () => {
  [server, redis] = await Promise.all([startEventsServer({ heartbeatMs: 200 }), startRedisServer()]);
  const prefix = `events-${Math.random().toString(36).slice(2)}:`;

  const one = await replica(server.url, prefix);
  const first = await one.events.subscribe('ev', { name: 'ticks', mode: 'push', policy: { heartbeatMs: 200 } });
  const gotOne: EventOccurrence[] = [];
  first.on('event', (event) => {
    gotOne.push(event);
  });
  await until(() => first.status().cursor === 'c-0', 'the first stream');
  server.emit('ticks');
  server.emit('ticks');
  await until(() => gotOne.length === 2, 'two events');
  await first.flush();
  await one.stop();

  server.emit('ticks'); // while no replica listens

  const two = await replica(server.url, prefix);
  const resumed = await two.events.resume({ policy: { heartbeatMs: 200 } });
  expect(resumed.map((s) => [s.name, s.mode])).toEqual([['ticks', 'push']]);
  const gotTwo: EventOccurrence[] = [];
  resumed[0]!.on('event', (event) => {
    gotTwo.push(event);
  });
  await until(() => gotTwo.length === 1, 'the event produced in between');
  server.emit('ticks');
  await until(() => gotTwo.length === 2, 'a live one');
  expect(gotOne.map((e) => e.eventId)).toEqual(['evt_1', 'evt_2']);
  expect(gotTwo.map((e) => e.eventId)).toEqual(['evt_3', 'evt_4']);
});
