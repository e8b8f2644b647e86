/**
 * What a 2025 host session may ask again after its SSE stream broke (`Last-Event-ID`): the last
 * messages of each of its streams, bounded. With it the SDK's transport primes every stream with
 * an event id, so a host can resume instead of losing a response.
 */
import { randomBytes } from 'node:crypto';
import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';

const KEPT = 256;

export class BoundedEventStore implements EventStore {
  private readonly events: { id: string; stream: string; message: JSONRPCMessage }[] = [];
  private next = 0;
  /**
   * Ids unique to this store: a session taken up by another process (http-sessions.ts) numbers
   * from 1 again, and an id the host kept from the old process must never name a new event.
   */
  private readonly epoch = randomBytes(4).toString('hex');

  storeEvent(stream: string, message: JSONRPCMessage): Promise<string> {
    return Promise.resolve(this.store(stream, message));
  }

  /** storeEvent without the promise, for the session transport's direct answers. */
  store(stream: string, message: JSONRPCMessage): string {
    const id = `${stream}_${this.epoch}-${++this.next}`;
    this.events.push({ id, stream, message });
    if (this.events.length > KEPT) this.events.shift();
    return id;
  }

  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    const cut = eventId.lastIndexOf('_');
    return Promise.resolve(cut > 0 ? eventId.slice(0, cut) : undefined);
  }

  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const stream = (await this.getStreamIdForEventId(lastEventId)) ?? '';
    const from = this.events.findIndex((event) => event.id === lastEventId);
    if (from < 0) return stream;
    for (const event of this.events.slice(from + 1)) if (event.stream === stream) await send(event.id, event.message);
    return stream;
  }
}
