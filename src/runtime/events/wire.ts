/**
 * The Events extension's wire (SEP-3415, draft, read 2026-12-07; docs/events.md lists every shape):
 * method and notification names, the results checked with zod (lenient: extra fields pass), and
 * what a failure means to a subscription (terminal or not).
 */
import { z } from 'zod';
import { McpError, TransportError } from '../../core/errors.js';
import type { SubscriptionFailure } from '../../../machines/subscription.machine.js';

export const EVENTS_EXTENSION = 'io.modelcontextprotocol/events';
export const SUBSCRIPTION_ID_META = 'io.modelcontextprotocol/subscriptionId';

export const EVENTS_METHODS = {
  list: 'events/list',
  poll: 'events/poll',
  stream: 'events/stream',
  subscribe: 'events/subscribe',
  unsubscribe: 'events/unsubscribe',
} as const;

export const EVENTS_NOTIFICATIONS = {
  active: 'notifications/events/active',
  event: 'notifications/events/event',
  heartbeat: 'notifications/events/heartbeat',
  error: 'notifications/events/error',
  terminated: 'notifications/events/terminated',
  listChanged: 'notifications/events/list_changed',
} as const;

/** The SEP's error codes (provisional numbers until it is accepted). */
export const EVENTS_ERROR_CODES = {
  invalidParams: -32602,
  methodNotFound: -32601,
  notFound: -32023,
  forbidden: -32024,
  resourceExhausted: -32025,
  unsupported: -32026,
  callbackEndpointError: -32027,
} as const;

const cursor = z
  .string()
  .nullish()
  .transform((value) => value ?? null);

export const EventOccurrenceSchema = z.looseObject({
  eventId: z.string(),
  name: z.string(),
  timestamp: z.string(),
  data: z.record(z.string(), z.unknown()),
  cursor: z.string().nullish(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});

export const EventDescriptorSchema = z.looseObject({
  name: z.string(),
  description: z.string().optional(),
  delivery: z.array(z.enum(['poll', 'push', 'webhook'])).min(1),
  inputSchema: z.record(z.string(), z.unknown()).optional(),
  payloadSchema: z.record(z.string(), z.unknown()).optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});

export const ListEventsResultSchema = z.looseObject({
  events: z.array(EventDescriptorSchema),
  nextCursor: z.string().optional(),
});

export const PollResultSchema = z.looseObject({
  events: z.array(EventOccurrenceSchema),
  cursor,
  truncated: z.boolean().optional().default(false),
  hasMore: z.boolean().optional().default(false),
  nextPollMs: z.number().int().nonnegative().optional(),
});

export const SubscribeResultSchema = z.looseObject({
  id: z.string(),
  refreshBefore: z.string().nullable(),
  cursor,
  truncated: z.boolean().optional().default(false),
  deliveryStatus: z.record(z.string(), z.unknown()).optional(),
});

export const ActiveParamsSchema = z.looseObject({ cursor, truncated: z.boolean().optional().default(false) });
export const HeartbeatParamsSchema = z.looseObject({ cursor });
export const ErrorParamsSchema = z.looseObject({
  error: z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() }),
});

/** The `error` of a termination (push notification, webhook envelope) as a subscription failure. */
export function terminationFailure(error: { code: number; message: string }): SubscriptionFailure {
  return {
    message: `terminated by the server: ${error.message} (${error.code})`,
    // NotFound and Unsupported: the type changed or went; fetching events/list and subscribing again is the SEP's answer.
    terminal: error.code === EVENTS_ERROR_CODES.forbidden || error.code === EVENTS_ERROR_CODES.invalidParams,
  };
}

const TERMINAL_CODES = new Set<number>([
  EVENTS_ERROR_CODES.invalidParams,
  EVENTS_ERROR_CODES.methodNotFound,
  EVENTS_ERROR_CODES.notFound,
  EVENTS_ERROR_CODES.forbidden,
  EVENTS_ERROR_CODES.unsupported,
  EVENTS_ERROR_CODES.callbackEndpointError,
]);

/** What a failed events request means: the server's refusal ends the subscription, anything else is tried again. */
export function classifyFailure(error: unknown): SubscriptionFailure {
  if (typeof error === 'object' && error !== null && typeof (error as SubscriptionFailure).terminal === 'boolean')
    return error as SubscriptionFailure;
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof McpError) return { message, terminal: TERMINAL_CODES.has(error.rpcCode) };
  // A 429 the request path did not absorb (its backpressure obeys Retry-After first): the backoff.
  if (error instanceof TransportError) return { message, terminal: false };
  return { message, terminal: false };
}
