/**
 * Request correlation: a plain Map from request id to the caller's promise, with the caller's
 * timeout and abort signal. Ids come from one counter per server that never restarts, so ids
 * keep increasing across sessions. Timeouts share one timer per server (see deadlines.ts);
 * settling removes the abort listener: nothing outlives the request.
 *
 * A request is also the signal of its own HTTP exchange (`ExchangeSignal`): the transport hands
 * it to undici, and a request that times out, is aborted or fails fires it, so its exchange is
 * released at once (a server trickling its answer keeps no socket past the deadline). No
 * AbortController per request: the request already exists, and the listener slot is a field.
 */
import { RequestAbortedError, RequestTimeoutError } from '../core/errors.js';
import type { JsonRpcResponse } from './jsonrpc.js';
import { Deadlines } from './deadlines.js';
import { mcpErrorOf } from './rpc-errors.js';

/** Whether a request whose outcome is unknown is sent again: `safe` (default) when repeating it is safe, `always`, or `never`. */
export type RetryMode = 'safe' | 'always' | 'never';

export interface Progress {
  progressToken: string | number;
  progress: number;
  total?: number;
  message?: string;
  /** The request was sent again after a recovery (a replay): the server started over, so progress may restart. */
  replayed?: true;
}

export interface CreateOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Never cancel this one on the wire (initialize). */
  uncancellable?: boolean;
  /** Ask the server for progress (a `progressToken` in `_meta`) and receive it here. */
  onProgress?: ((progress: Progress) => void) | undefined;
  /** Each progress notification restarts the timeout, up to `maxTotalTimeoutMs` in all. */
  resetTimeoutOnProgress?: boolean | undefined;
  /** The hard limit when the timeout is reset by progress; default 10 × timeoutMs. */
  maxTotalTimeoutMs?: number | undefined;
  /** Whether to send it again when its outcome is unknown (default `safe`). */
  retry?: RetryMode | undefined;
  /** How long it may wait for the server (held, parked, in doubt) before it times out; `timeoutMs` bounds the rest. */
  holdMs?: number | undefined;
  /** Told the JSON-RPC id the request goes out with, and again when a replay renumbers it. */
  onId?: ((id: number) => void) | undefined;
}

/**
 * What undici needs to abort one exchange (it accepts any EventTarget-like object): the caller's
 * AbortSignal, or a pending request.
 */
export interface ExchangeSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

type ReleaseListener = () => void;

export interface PendingRequest extends ExchangeSignal {
  id: number;
  readonly method: string;
  readonly params: Record<string, unknown> | undefined;
  readonly signal: AbortSignal | undefined;
  /** This request's own timeout; the HTTP exchange is bounded by it too. */
  readonly timeoutMs: number;
  /** On the wire (or about to be): a timeout or abort must tell the server. */
  sent: boolean;
  /** Never cancel this one on the wire (initialize). */
  readonly uncancellable: boolean;
  resolve(value: unknown): void;
  reject(error: Error): void;
  /** `Date.now()` when this request times out (moved on by progress when it resets the timeout). */
  dueAt: number;
  /** How long it may wait for the server before it times out, if bounded (`holdMs`). */
  readonly holdMs: number | undefined;
  /** While a hold bound runs (`dueAt` is then the bound): its own `dueAt`, back once it is sent. */
  callDueAt: number | undefined;
  onAbort: (() => void) | undefined;
  readonly progressToken: string | undefined;
  readonly onProgress: ((progress: Progress) => void) | undefined;
  readonly resetTimeoutOnProgress: boolean;
  /** When a progress-extended request must end, whatever progress arrives. */
  readonly deadline: number;
  /** Whether to send it again when its outcome is unknown. */
  readonly retry: RetryMode;
  /** Times it was put on the wire; from the second on (a replay after a recovery) its progress is marked `replayed`. */
  sends: number;
  /** Settled without its response (timed out, aborted, failed): its exchange is to be released. */
  aborted: boolean;
  /** Why it was released: the error the caller got. */
  reason: Error | undefined;
  /** The listeners of its exchanges (undici's): one, rarely more (a resume GET while the POST closes). */
  releaseListeners: ReleaseListener | ReleaseListener[] | undefined;
}

/**
 * The era probe: every 2025-era server refuses it, once per start, and its error is read only as
 * evidence (runtime/session/discover.ts): no stack is captured for it (~1 % of a start of 2,000).
 */
const ERA_PROBE = 'server/discover';

function withoutStack<T>(build: () => T): T {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return build();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

// Shared by every request (no closure per request): `this` is the request.
function addReleaseListener(this: PendingRequest, _type: 'abort', listener: ReleaseListener): void {
  const current = this.releaseListeners;
  if (current === undefined) this.releaseListeners = listener;
  else if (typeof current === 'function') this.releaseListeners = [current, listener];
  else current.push(listener);
}

function removeReleaseListener(this: PendingRequest, _type: 'abort', listener: ReleaseListener): void {
  const current = this.releaseListeners;
  if (current === listener) this.releaseListeners = undefined;
  else if (Array.isArray(current)) {
    const index = current.indexOf(listener);
    if (index !== -1) current.splice(index, 1);
  }
}

/** Fires the request's exchange listeners once: undici aborts the request and frees its socket. */
function release(request: PendingRequest, reason: Error): void {
  request.aborted = true;
  request.reason = reason;
  const listeners = request.releaseListeners;
  if (listeners === undefined) return;
  request.releaseListeners = undefined;
  if (typeof listeners === 'function') listeners();
  else for (const listener of listeners) listener();
}

/** Told of each request as it settles, with its result or error (observe/calls.ts, while someone watches calls). */
export interface SettleObserver {
  settled(request: PendingRequest, result: unknown, error: Error | undefined): void;
}

export interface PendingOptions {
  server: string;
  /** Called when a sent request times out or is aborted: send `notifications/cancelled`. */
  cancel(request: PendingRequest, reason: string): void;
  /** Called when a request times out (after it failed): evidence for the connection. */
  timedOut?(request: PendingRequest): void;
  /**
   * A JSON-RPC error answered to a request that says it was not processed and asks to wait (the
   * draft rate-limit error -32023): true when the request waits to be sent again (it stays pending).
   */
  rateLimited?(request: PendingRequest, error: { message: string; data?: unknown }): boolean;
  /** Why a request that never left is waiting (its timeout error says so); undefined when nothing holds it. */
  whyWaiting?(request: PendingRequest): string | undefined;
}

/** The draft rate-limit SEP's JSON-RPC error: the request was not processed; `data.retryAfterMs` says how long to wait. */
const RATE_LIMITED = -32023;

export class PendingRequests {
  private readonly byId = new Map<number, PendingRequest>();
  /** Only once a request asks for progress: most connections never do, and every idle one pays for an empty Map. */
  private byProgressToken: Map<string, PendingRequest> | undefined;
  private lastId = 0;
  /** Requests whose caller follows their id (events/stream routes its notifications by it); most have none. */
  private idWatchers: WeakMap<PendingRequest, (id: number) => void> | undefined = undefined;
  /** Responses delivered so far: the keepalive skips its probe when one came since its last (probes/keepalive-probe.ts). */
  answered = 0;
  /**
   * Stamped with `Date.now()` at every response: the origin's record when the keepalive proves
   * liveness per origin (transports/origin-liveness.ts, set by runtime/recovery/origin-membership.ts), else this one's own.
   */
  answers: { lastAnswerAt: number } = { lastAnswerAt: -Infinity };
  private readonly deadlines = new Deadlines<PendingRequest>(
    () => this.byId.values(),
    (request) => this.expire(request),
  );

  /**
   * Told of every request that settles, while set: the request limits set it only while requests
   * wait for a slot (requests/request-limits.ts); unset it costs one field read per settle.
   */
  onSettled: ((request: PendingRequest) => void) | undefined = undefined;

  /** Set only while the server's calls are watched (observe/calls.ts); unset it costs one field read per settle. */
  observer: SettleObserver | undefined = undefined;

  constructor(private readonly options: PendingOptions) {}

  get size(): number {
    return this.byId.size;
  }

  has(id: number | string): boolean {
    return this.byId.has(id as number);
  }

  /** The pending request with this id, if any. */
  get(id: number | string): PendingRequest | undefined {
    return this.byId.get(id as number);
  }

  create(
    method: string,
    params: Record<string, unknown> | undefined,
    options: CreateOptions,
  ): { request: PendingRequest; promise: Promise<unknown> } {
    let resolve!: (value: unknown) => void;
    let reject!: (error: Error) => void;
    const promise = new Promise<unknown>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const id = ++this.lastId;
    // The token outlives renumbering (a replay keeps its params), and ids never repeat, so it is unique.
    const progressToken = options.onProgress ? `progress-${id}` : undefined;
    const { timeoutMs, signal } = options;
    const now = Date.now();
    const request: PendingRequest = {
      id,
      method,
      params: progressToken
        ? { ...params, _meta: { ...(params?._meta as object | undefined), progressToken } }
        : params,
      signal,
      timeoutMs,
      sent: false,
      uncancellable: options.uncancellable ?? false,
      resolve,
      reject,
      dueAt: now + timeoutMs,
      holdMs: options.holdMs,
      callDueAt: undefined,
      onAbort: undefined,
      progressToken,
      onProgress: options.onProgress,
      resetTimeoutOnProgress: options.resetTimeoutOnProgress ?? false,
      deadline: now + (options.maxTotalTimeoutMs ?? 10 * timeoutMs),
      retry: options.retry ?? 'safe',
      sends: 0,
      aborted: false,
      reason: undefined,
      releaseListeners: undefined,
      addEventListener: addReleaseListener,
      removeEventListener: removeReleaseListener,
    };
    if (options.onId) {
      (this.idWatchers ??= new WeakMap()).set(request, options.onId);
      options.onId(id);
    }
    if (signal?.aborted) {
      reject(new RequestAbortedError(method, { server: this.options.server, cause: signal.reason }));
      return { request, promise };
    }
    this.byId.set(request.id, request);
    if (progressToken) (this.byProgressToken ??= new Map()).set(progressToken, request);
    this.deadlines.track(request.dueAt);
    if (signal) {
      request.onAbort = () => this.abort(request);
      signal.addEventListener('abort', request.onAbort, { once: true });
    }
    return { request, promise };
  }

  /**
   * A `notifications/progress` from the server, for its request (unknown tokens are ignored);
   * returns it as delivered: marked `replayed` when the request was sent again.
   */
  progress(received: Progress): Progress {
    const request = this.byProgressToken?.get(String(received.progressToken));
    if (!request || !this.isPending(request)) return received;
    const progress: Progress = request.sends > 1 ? { ...received, replayed: true } : received;
    if (request.resetTimeoutOnProgress) {
      const now = Date.now();
      if (request.deadline <= now) {
        this.expire(request);
        return received;
      }
      request.dueAt = Math.min(now + request.timeoutMs, request.deadline);
      this.deadlines.track(request.dueAt);
    }
    try {
      request.onProgress?.(progress);
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
    return progress;
  }

  /** It waits for the server (held, parked, in doubt): its hold bound, if it has one, starts now. */
  waits(request: PendingRequest): void {
    const holdMs = request.holdMs;
    if (holdMs === undefined || request.callDueAt !== undefined) return;
    const due = Date.now() + holdMs;
    if (due >= request.dueAt) return;
    request.callDueAt = request.dueAt;
    request.dueAt = due;
    this.deadlines.track(due);
  }

  /** Sent: its own timeout bounds it again, not the hold. */
  sending(request: PendingRequest): void {
    if (request.callDueAt === undefined) return;
    request.dueAt = request.callDueAt;
    request.callDueAt = undefined;
  }

  /** Gives a request a fresh id before it is sent again (a replay after re-initialize). */
  renumber(request: PendingRequest): void {
    this.byId.delete(request.id);
    request.id = ++this.lastId;
    this.byId.set(request.id, request);
    this.idWatchers?.get(request)?.(request.id);
  }

  /** Delivers a response; false when nobody waits for that id (late, cancelled, or unknown). */
  settleResponse(response: JsonRpcResponse): boolean {
    const request = this.byId.get(response.id as number);
    if (!request) return false;
    if (
      'error' in response &&
      response.error.code === RATE_LIMITED &&
      this.options.rateLimited?.(request, response.error)
    )
      return true;
    this.answered++;
    this.answers.lastAnswerAt = Date.now();
    this.finish(request);
    if ('error' in response) {
      const { code, message, data } = response.error;
      const error =
        request.method === ERA_PROBE
          ? withoutStack(() => mcpErrorOf(code, message, data, { server: this.options.server }))
          : mcpErrorOf(code, message, data, { server: this.options.server });
      request.reject(error);
      if (this.observer !== undefined) this.observer.settled(request, undefined, error);
    } else {
      request.resolve(response.result);
      if (this.observer !== undefined) this.observer.settled(request, response.result, undefined);
    }
    return true;
  }

  /** Rejects the request and releases whatever exchange it still has in flight. */
  fail(request: PendingRequest, error: Error): void {
    if (this.byId.get(request.id) !== request) return;
    this.finish(request);
    request.reject(error);
    release(request, error);
    if (this.observer !== undefined) this.observer.settled(request, undefined, error);
  }

  /** The requests on the wire now (not waiting in the gate), in the order they were issued. */
  sentRequests(): PendingRequest[] {
    return [...this.byId.values()].filter((request) => request.sent);
  }

  /** `error` may be a factory: an error (and its stack) is built only when a request waits for it. */
  failAll(error: Error | (() => Error)): void {
    if (this.byId.size === 0) return;
    const reason = typeof error === 'function' ? error() : error;
    for (const request of [...this.byId.values()]) this.fail(request, reason);
  }

  isPending(request: PendingRequest): boolean {
    return this.byId.get(request.id) === request;
  }

  private expire(request: PendingRequest): void {
    if (!this.isPending(request)) return;
    // Timed out waiting for the server within its hold bound, or by its own timeout.
    const timeoutMs = request.callDueAt !== undefined ? request.holdMs! : request.timeoutMs;
    const waitedFor = request.sent ? undefined : this.options.whyWaiting?.(request);
    this.fail(request, new RequestTimeoutError(request.method, timeoutMs, { server: this.options.server, waitedFor }));
    if (request.sent && !request.uncancellable) this.options.cancel(request, `timed out after ${timeoutMs} ms`);
    this.options.timedOut?.(request);
  }

  private abort(request: PendingRequest): void {
    if (!this.isPending(request)) return;
    this.fail(
      request,
      new RequestAbortedError(request.method, { server: this.options.server, cause: request.signal?.reason }),
    );
    if (request.sent && !request.uncancellable) this.options.cancel(request, 'aborted by the caller');
  }

  private finish(request: PendingRequest): void {
    this.byId.delete(request.id);
    if (request.progressToken) this.byProgressToken?.delete(request.progressToken);
    if (this.byId.size === 0) this.deadlines.clear();

    if (request.onAbort) request.signal?.removeEventListener('abort', request.onAbort);
    if (this.onSettled !== undefined) this.onSettled(request);
  }
}
