/**
 * Requests as they settle, for whoever watches them (`sup.on('call')`, the dashboard's activity
 * log): one `call` event per request the user made, with its method, tool, duration, outcome and
 * how often it went on the wire. A server's observer exists only while someone listens
 * (ServerContext.calls); otherwise the request path pays one `undefined` check and nothing else.
 * While it exists it hooks the settle point of the server's pending requests (no promise reaction,
 * no closure per call): one small record per request under way, one event per request settled.
 */
import type { PendingRequest, PendingRequests, SettleObserver } from '../protocol/pending.js';

export interface CallEvent {
  server: string;
  method: string;
  /** `tools/call`: the tool's name. */
  tool: string | undefined;
  /** When the caller issued it (epoch ms). */
  at: number;
  durationMs: number;
  outcome: 'ok' | 'error';
  /** The error's kind and words (the library's errors carry no secrets; redacted once more). */
  error?: string | undefined;
  /** Times it went on the wire: 0 if it never left (held, then failed), 2+ after replays or retries. */
  sends: number;
  /** The request's params and its result, as the caller has them: a listener decides whether to show them. */
  params: Record<string, unknown> | undefined;
  result?: unknown;
}

interface Started {
  /** `performance.now()` when it was issued. */
  start: number;
  /** What the caller awaits: after an input-required round it, not the first request, tells the outcome. */
  promise: Promise<unknown>;
}

/** A modern-era result that asks for input: the request goes on in further rounds (runtime/requests/multi-round-trip.ts). */
const INPUT_REQUIRED = 'input_required';

export class CallObserver implements SettleObserver {
  /** The requests under way (only while observed): when each began, and what its caller awaits. */
  private readonly started = new Map<PendingRequest, Started>();
  /** A request made by the user (not a keepalive probe): set while it is issued. */
  private issuing = false;

  constructor(
    private readonly server: string,
    private readonly pending: PendingRequests,
    private readonly emit: (call: CallEvent) => void,
    private readonly redact: (text: string) => string,
  ) {
    pending.observer = this;
  }

  /** No more events: the pending requests forget this observer. */
  stop(): void {
    if (this.pending.observer === this) this.pending.observer = undefined;
    this.started.clear();
  }

  /** Issues a request of the user's: the request it creates is the one tracked. */
  request<O>(
    issuer: { request(method: string, params: Record<string, unknown> | undefined, options?: O): Promise<unknown> },
    method: string,
    params: Record<string, unknown> | undefined,
    options: O | undefined,
  ): Promise<unknown> {
    this.issuing = true;
    try {
      return issuer.request(method, params, options);
    } finally {
      this.issuing = false;
    }
  }

  track(request: PendingRequest, promise: Promise<unknown>): void {
    if (!this.issuing) return;
    this.issuing = false;
    const started: Started = { start: performance.now(), promise };
    // Refused as it was made (its signal already aborted): it never settles through the pending requests.
    if (!this.pending.isPending(request)) return this.await(request, started);
    this.started.set(request, started);
  }

  settled(request: PendingRequest, result: unknown, error: Error | undefined): void {
    const started = this.started.get(request);
    if (started === undefined) return;
    this.started.delete(request);
    if (error === undefined && (result as { resultType?: unknown } | null)?.resultType === INPUT_REQUIRED)
      return this.await(request, started);
    this.report(request, started, result, error);
  }

  /** The outcome is the caller's promise's (the rare paths: refused at once, input rounds). */
  private await(request: PendingRequest, started: Started): void {
    started.promise.then(
      (result) => this.report(request, started, result, undefined),
      (error: unknown) => this.report(request, started, undefined, error),
    );
  }

  private report(request: PendingRequest, started: Started, result: unknown, error: unknown): void {
    const params = request.params;
    const durationMs = performance.now() - started.start;
    this.emit({
      server: this.server,
      method: request.method,
      tool: request.method === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined,
      at: Math.round(Date.now() - durationMs),
      durationMs: Math.round(durationMs * 10) / 10,
      outcome: error === undefined ? 'ok' : 'error',
      error: error === undefined ? undefined : this.redact(describe(error)),
      sends: request.sends,
      params,
      result,
    });
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.name && error.name !== 'Error' ? `${error.name}: ${error.message}` : error.message;
}
