/**
 * The runtime's side of the modern listen (listen.ts): opening it with the set it asks for (the
 * subscribed resources, the tasks being polled), and telling the listener child when that set
 * changes (resource-subscriptions.ts, a task's wait: LISTEN_WANTED to the connection, which starts
 * a listener child when none runs). A runtime creates it at its first listen,
 * task watch or subscription change: an idle server holds none.
 */
import type { ListenerOpening } from '../../../machines/connection-host.js';
import type { SnapshotFrom } from 'xstate';
import type { ConnectionEvent, connectionMachine, SessionInfo } from '../../../machines/connection.machine.js';
import type { Transport } from '../../transports/transport.js';
import { listenFilter, ModernListens, type ListenControl } from './listen.js';
import { offersTaskNotifications, WatchedTasks } from './task-subscriptions.js';

/** What the listen needs to know of the connection: its era, its session; and how to tell it. */
export interface ListeningHost {
  readonly name: string;
  snapshot(): SnapshotFrom<typeof connectionMachine> | undefined;
  session(): SessionInfo | undefined;
  tell(event: ConnectionEvent): void;
}

const NOTHING_TO_LISTEN_FOR: ListenerOpening = { kind: 'unavailable', reason: 'nothing to listen for' };

export class ModernListening {
  /** The `subscriptions/listen` requests (created by the first listen or change). */
  private created: ModernListens | undefined;
  /** The tasks being polled, whose status the listen asks for (created by the first). */
  private watchedTasks: WatchedTasks | undefined;

  constructor(
    private readonly host: ListeningHost,
    /** The URIs subscribed now. */
    private readonly subscribedUris: () => readonly string[],
  ) {}

  /** The listen requests, if one was ever opened or changed (reading it creates nothing). */
  get requests(): ModernListens | undefined {
    return this.created;
  }

  private listens(): ModernListens {
    return (this.created ??= new ModernListens(this.host.name, this.subscribedUris));
  }

  /** The listener's open in the modern era: `subscriptions/listen` stands for the GET stream. */
  open(
    transport: Transport,
    envelope: { wrap(params: Record<string, unknown>): Record<string, unknown> },
    timeoutMs: number,
  ): Promise<ListenerOpening> {
    const { capabilities = {} } = this.host.session() ?? {};
    const uris = this.subscribedUris();
    const taskIds = this.watchedTasks?.ids() ?? [];
    // Nothing to listen for, and no listen ever opened or changed: nothing waits for one (an idle
    // server, the usual case, builds no listen requests).
    if (!this.created && !listenFilter(capabilities, uris, taskIds)) return Promise.resolve(NOTHING_TO_LISTEN_FOR);
    return this.listens().listenFor(transport, envelope, capabilities, uris, taskIds, timeoutMs);
  }

  /** A task being polled joins the listen's set, on a server that offers task notifications. */
  watchTask(taskId: string): () => void {
    this.watchedTasks ??= new WatchedTasks(() => {
      if (offersTaskNotifications(this.host.session()?.capabilities)) this.control()?.changed();
    });
    return this.watchedTasks.watch(taskId);
  }

  /**
   * The server is, or was last, spoken to in the modern era: what resource subscriptions change,
   * the listen's set (resource-subscriptions.ts). Undefined in the legacy era.
   */
  control(): ListenControl | undefined {
    const context = this.host.snapshot()?.context;
    // Pinned modern: modern before the first discovery too.
    const era = context?.latchedEra ?? (context?.preferredEra === 'modern' ? 'modern' : undefined);
    if (era !== 'modern') return undefined;
    const listens = this.listens();
    return {
      capabilities: this.host.session()?.capabilities,
      changed: () => {
        const generation = listens.changed();
        // The listener issues its listen again with the new set; a connection that had nothing
        // to listen to (no listener child) starts one. Outside `ready` the next listener opens with it.
        this.host.tell({ type: 'LISTEN_WANTED' });
        return generation;
      },
      acknowledgedSince: (generation, timeoutMs, signal) => listens.acknowledgedSince(generation, timeoutMs, signal),
    };
  }
}
