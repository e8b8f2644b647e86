/**
 * The listening GET stream once open: what the listener reads and cancels. Its SSE handlers are
 * its own methods, so an idle stream holds one object, not a handlers object of closures.
 */
import { discardBody, type Body } from '../../core/response-body.js';
import { readSseStream, type SseHandlers } from '../sse-reader.js';
import type { ListenerOpenResult } from '../transport.js';

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

export class ListenerStream implements OpenListener, SseHandlers {
  readonly kind = 'open';
  /** Called unbound by the listener when it stops. */
  readonly cancel: () => void;
  private hooks: CursorHooks | undefined = undefined;

  constructor(
    private readonly owner: ListenerStreamOwner,
    private readonly body: Body,
    private readonly generation: number,
  ) {
    this.cancel = () => discardBody(body);
  }

  read(hooks: CursorHooks): Promise<void> {
    this.hooks = hooks;
    return readSseStream(this.body, this, this.owner.maxMessageBytes, this.owner.server);
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
