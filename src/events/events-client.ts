/**
 * `sup.events` (experimental, the EventsClient): the events client across every server of a supervisor. Each server
 * keeps its own subscriptions (`handle.events`); this reads and starts them by server name.
 */
import type { EventDescriptor, ResumeOptions, ServerEvents, SubscribeOptions } from './server-events.js';
import type { Subscription } from './subscription.js';

export interface EventsServers {
  names(): Iterable<string>;
  events(name: string): ServerEvents;
}

export class EventsClient {
  constructor(private readonly servers: EventsServers) {}

  /** The event types of every server that offers the extension (others are left out). */
  async list(): Promise<Record<string, EventDescriptor[]>> {
    const lists: Record<string, EventDescriptor[]> = {};
    for (const name of this.servers.names()) {
      const events = this.servers.events(name);
      if (events.offered()) lists[name] = await events.list();
    }
    return lists;
  }

  subscribe(server: string, options: SubscribeOptions): Promise<Subscription> {
    return this.servers.events(server).subscribe(options);
  }

  /** Every live subscription, of every server. */
  active(): Subscription[] {
    return [...this.servers.names()].flatMap((name) => this.servers.events(name).active());
  }

  /** Starts every subscription the store lists, on every server (a restarted process, another replica). */
  async resume(options: ResumeOptions = {}): Promise<Subscription[]> {
    const started: Subscription[] = [];
    for (const name of this.servers.names()) started.push(...(await this.servers.events(name).resume(options)));
    return started;
  }
}
