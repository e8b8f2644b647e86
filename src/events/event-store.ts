/**
 * What the events client keeps in the supervisor's store (docs/events.md, "Store keys"): per server
 * (by its identity, and the credential it is used with: the SEP keys subscriptions by principal,
 * and until principals exist the credential stands for it), the list of subscriptions, and per
 * subscription its cursor and the event ids recently delivered (the dedupe window).
 */
import { createHash } from 'node:crypto';
import type { Store } from '../store/types.js';

const PREFIX = 'mcp-supervisor:events:';

export type SubscriptionMode = 'poll' | 'push' | 'webhook';

/** One subscription as the list keeps it: enough to start it again in another process. */
export interface StoredSubscription {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  mode: SubscriptionMode;
  /** Webhook: where deliveries go, and the `whsec_` secret they are signed with. */
  webhook?: { url: string; secret: string } | undefined;
}

/** Where one subscription is: the last cursor delivered, and the event ids of its dedupe window. */
export interface StoredPosition {
  cursor: string | null;
  seen: string[];
}

/** JSON with sorted keys: the same arguments give the same subscription id whatever their order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/** A subscription's id: what it listens for (name and arguments), stable across processes. */
export function subscriptionId(name: string, args: Record<string, unknown>): string {
  return digest(canonicalJson({ name, arguments: args }));
}

/** The store keys of one server's subscriptions, under its credential when it has one. */
export class EventKeys {
  private readonly scope: string;

  constructor(server: string, credential: string | undefined) {
    this.scope = credential === undefined ? server : `${server}:${digest(credential)}`;
  }

  list(): string {
    return `${PREFIX}list:${this.scope}`;
  }

  position(id: string): string {
    return `${PREFIX}position:${this.scope}:${id}`;
  }
}

/** Reads and writes one server's subscriptions; every write of a key waits for the one before it. */
export class EventStore {
  private readonly chains = new Map<string, Promise<unknown>>();

  constructor(
    readonly store: Store,
    readonly keys: EventKeys,
    private readonly warn: (error: Error) => void,
  ) {}

  async subscriptions(): Promise<StoredSubscription[]> {
    const entry = await this.store.get<{ subscriptions?: StoredSubscription[] }>(this.keys.list());
    return Array.isArray(entry?.value.subscriptions) ? entry.value.subscriptions : [];
  }

  async position(id: string): Promise<StoredPosition | undefined> {
    const entry = await this.store.get<StoredPosition>(this.keys.position(id));
    const value = entry?.value;
    if (!value || !Array.isArray(value.seen)) return undefined;
    return { cursor: typeof value.cursor === 'string' ? value.cursor : null, seen: value.seen };
  }

  /** Adds (or replaces) a subscription in the list; compare-and-swap, so two processes do not lose each other's. */
  remember(subscription: StoredSubscription): Promise<void> {
    return this.editList((list) => [...list.filter((s) => s.id !== subscription.id), subscription]);
  }

  forget(id: string): Promise<void> {
    return this.chain(this.keys.position(id), async () => {
      await this.editList((list) => list.filter((s) => s.id !== id));
      await this.store.delete(this.keys.position(id));
    });
  }

  /** Writes a position after the ones before it (the last written is the newest); false when the store failed. */
  async writePosition(id: string, position: () => StoredPosition): Promise<boolean> {
    let ok = false;
    await this.chain(this.keys.position(id), async () => {
      await this.store.set(this.keys.position(id), position());
      ok = true;
    });
    return ok;
  }

  private editList(edit: (list: StoredSubscription[]) => StoredSubscription[]): Promise<void> {
    return this.chain(this.keys.list(), async () => {
      for (let attempt = 0; attempt < 10; attempt++) {
        const entry = await this.store.get<{ subscriptions?: StoredSubscription[] }>(this.keys.list());
        const list = Array.isArray(entry?.value.subscriptions) ? entry.value.subscriptions : [];
        const written = await this.store.set(
          this.keys.list(),
          { subscriptions: edit(list) },
          { ifVersion: entry?.version ?? 0 },
        );
        if (written.ok) return;
      }
      throw new Error('the events subscription list kept changing under this write');
    });
  }

  private chain(key: string, write: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(key) ?? Promise.resolve())
      .then(write)
      .catch((error: unknown) => this.warn(error instanceof Error ? error : new Error(String(error))));
    this.chains.set(key, next);
    void next.then(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
    return next;
  }

  /** Every write made so far has settled. */
  async flush(): Promise<void> {
    while (this.chains.size > 0) await Promise.all(this.chains.values());
  }
}
