/**
 * One server's runtime as its users hold it: the handle, its tools and tasks, status() and the
 * settings. They read what the server is and learned through the context's read side and the
 * connection's view, and come in by a request, a notification, an answer to the server's input, a
 * watched task or a changed listen. The runtime's other face, the machine's contract
 * (machines/connection-host.ts) and the transports' sink, is held only by the supervisor that
 * builds and drives it.
 */
import type { ServerContextView } from './context/server-context.js';
import type { RequestOptions } from './context/events.js';
import type { ConnectionView } from './connection-view.js';
import type { ListenControl } from './listening/listen.js';
import type { RequestPath } from './requests/request-path.js';
import type { HandlerContext } from './server-input/server-requests.js';

/** The connection seen from its runtime, read only; `lastStatus` is status()'s own slot (handle/status.ts). */
type ConnectionReader = Readonly<
  Pick<ConnectionView, 'state' | 'lastError' | 'states' | 'nextAttemptAt' | 'firstOutcome' | 'nextAttempt'>
> &
  Pick<ConnectionView, 'lastStatus' | 'unchanged' | 'confirmed'>;

/** What the request path knows of the server's tools and limits, read only. */
type RequestPathReader = Readonly<
  Pick<RequestPath, 'limits' | 'toolHeaders' | 'mirrorsToolHeaders' | 'maxInputRounds'>
>;

export interface ServerPort {
  readonly context: ServerContextView;
  readonly view: ConnectionReader;
  readonly requests: RequestPathReader;
  /** The last failure of a connection attempt, typed (the machine keeps only its text). */
  readonly lastFailure: Error | undefined;
  /** Last keepalive round trip and misses in a row: the keepalive child's own, or its origin keepalive's. */
  keepalive(): { lastRttMs: number | undefined; missed: number };
  request(method: string, params: Record<string, unknown> | undefined, options?: RequestOptions): Promise<unknown>;
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
  /** An embedded request of a multi round-trip request: roots set with `setRoots` answer `roots/list`, else the handlers. */
  answerInput(
    method: string,
    params: Record<string, unknown>,
    context: HandlerContext,
  ): Promise<Record<string, unknown>>;
  /** A `roots` handler was given: every session advertises the roots capability. */
  advertisesRoots(): boolean;
  /** Modern era: a task being polled joins the listen's set, on a server that offers task notifications. */
  watchTask(taskId: string): () => void;
  /** Modern era: what resource subscriptions change, the listen's set; undefined in the legacy era. */
  listenControl(): ListenControl | undefined;
}
