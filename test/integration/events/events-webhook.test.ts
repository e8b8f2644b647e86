/**
 * Webhook delivery (SEP-3415, experimental) against servers/events-server.ts: the receiver
 * answers the verification challenge, verifies Standard Webhooks signatures, and hands events to
 * the subscription; a refresh comes before `refreshBefore`; a server that restarted and forgot
 * its subscriptions is subscribed again with the cursor, and the events of the gap arrive.
 */
import { afterEach, expect, it } from 'vitest';
import { connect } from '../../../src/connect.js';
import type { ServerHandle } from '../../../src/handle/server-handle.js';
import {
  createWebhookReceiver,
  signWebhook,
  verifyWebhook,
  type WebhookReceiver,
} from '../../../src/events/webhook-receiver.js';
import type { EventOccurrence } from '../../../src/events/subscription.js';
import { startEventsServer, type EventsServer } from '../../../servers/events-server.js';

let server: EventsServer | undefined;
let handle: ServerHandle | undefined;
let receiver: WebhookReceiver | undefined;

afterEach(async () => {
  await handle?.close();
  await server?.close();
  await receiver?.close();
});

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

it('verifies signatures: a wrong secret, a stale timestamp and a changed body are refused', () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  const body = Buffer.from('{"eventId":"e1"}');
  const now = 1_800_000_000;
  const signature = signWebhook(secret, 'e1', now, body);
  const headers = { id: 'e1', timestamp: String(now), signature };
  expect(verifyWebhook(secret, headers, body, now)).toBe(true);
  expect(verifyWebhook(secret, { ...headers, signature: `v1,AAAA ${signature}` }, body, now), 'any of several').toBe(
    true,
  );
  const other = `whsec_${Buffer.alloc(32, 8).toString('base64')}`;
  expect(verifyWebhook(other, headers, body, now)).toBe(false);
  expect(verifyWebhook(secret, headers, body, now + 301)).toBe(false);
  expect(verifyWebhook(secret, headers, Buffer.from('{"eventId":"e2"}'), now)).toBe(false);
  expect(() => signWebhook('whsec_c2hvcnQ=', 'e1', now, body)).toThrow(/24 to 64 bytes/);
});

it('subscribes with a whsec_ secret, receives signed deliveries, refreshes, and resubscribes after the server forgot it', async () => {
  server = await startEventsServer({ webhookTtlMs: 1_500 });
  receiver = createWebhookReceiver();
  await receiver.listen();
  handle = await connect({ url: server.url, protocolVersion: 'modern', keepalive: false, requestTimeoutMs: 2_000 });
  const subscription = await handle.events.subscribe({
    name: 'ticks',
    mode: 'webhook',
    receiver,
    policy: { refreshMarginMs: 500 },
  });
  const got: EventOccurrence[] = [];
  subscription.on('event', (event) => {
    got.push(event);
  });
  await until(() => subscription.status().state === 'subscribed', 'the subscription');
  const subscribe = server.requests.find((r) => r.method === 'events/subscribe')!;
  expect(String((subscribe.params['delivery'] as { secret: string }).secret)).toMatch(/^whsec_/);
  expect(subscription.status()).not.toHaveProperty('secret');
  server.emit('ticks');
  server.emit('ticks');
  await until(() => got.length === 2, 'two deliveries');
  // The refresh comes before the 1.5 s grant runs out (its margin, less jitter).
  await until(() => server!.count('events/subscribe') >= 2, 'a refresh', 3_000);
  // The server restarts and forgets its webhooks: events happen meanwhile; the next refresh subscribes again with the cursor.
  await server.restart({ forget: true });
  server.emit('ticks');
  await until(() => got.length === 3, 'the event of the gap, after the resubscription', 5_000);
  expect(got.map((e) => e.eventId)).toEqual(['evt_1', 'evt_2', 'evt_3']);
  const last = server.requests.filter((r) => r.method === 'events/subscribe').at(-1)!;
  expect(last.params['cursor']).toBe('c-2');
}, 20_000);
