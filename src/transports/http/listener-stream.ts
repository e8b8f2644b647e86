/**
 * The listening GET stream once open: what the listener reads and cancels. Its SSE handlers are
 * its own methods, so an idle stream holds one object, not a handlers object of closures.
 */
import type { Client } from 'undici';
import { closeStreamClient, type Body } from '../../core/response-body.js';
import { readSseStream, type SseHandlers } from '../sse-reader.js';
import type { ListenerOpenResult } from '../transport.js';
import type { EventStreamResult } from '../http-requests.js';

type OpenListener = Extract<ListenerOpenResult, { kind: 'open' }>;
type CursorHooks = Parameters<OpenListener['read']>[0];

/** What the stream tells its transport (streamable-http.ts). */
export interface ListenerStreamOwner {
  readonly maxMessageBytes: number;
  readonly server: string | undefined;
  deliverSafely(data: string): void;
  /** The stream's last event id, kept for a resume if the session is still the one it opened in. */
  recordListenerEventId(id: string, generation: number): void;
}

class ListenerStream implements OpenListener, SseHandlers {
  readonly kind = 'open';
  /** Called unbound by the listener when it stops. */
  readonly cancel: () => void;
  private hooks: CursorHooks | undefined = undefined;

  constructor(
    private readonly owner: ListenerStreamOwner,
    private readonly body: Body,
    private readonly generation: number,
    /** The stream's own client (pool.ts: streamClient): destroying it closes the socket, no reconnect. */
    client: Client,
  ) {
    this.cancel = () => closeStreamClient(client, body);
  }

  read(hooks: CursorHooks): Promise<void> {
    this.hooks = hooks;
    const reading = readSseStream(this.body, this, this.owner.maxMessageBytes, this.owner.server);
    // Ended or failed: its socket goes with it (a server that ends the stream may keep it alive).
    reading.then(this.cancel, this.cancel);
    return reading;
  }

  onEvent(data: string): void {
    this.owner.deliverSafely(data);
  }

  onEventId(id: string): void {
    this.owner.recordListenerEventId(id, this.generation);
    this.hooks?.onEventId(id);
  }

  onRetry(ms: number): void {
    this.hooks?.onRetry(ms);
  }
}

/** The listening GET on a client of its own (pool.ts: streamClient): the client goes when the stream does. */
export async function openListenerStream(
  owner: ListenerStreamOwner,
  generation: number,
  client: Client,
  open: (client: Client) => Promise<EventStreamResult>,
): Promise<ListenerOpenResult> {
  let response: EventStreamResult;
  try {
    response = await open(client);
  } catch (error) {
    closeStreamClient(client);
    throw error;
  }
  if (response.kind === 'open') return new ListenerStream(owner, response.body, generation, client);
  closeStreamClient(client);
  return response;
}
