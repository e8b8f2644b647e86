/**
 * Requests as they settle, for whoever watches them (`sup.on('call')`, the dashboard's activity
 * log): one `call` event per request the user made, with its method, tool, duration, outcome and
 * how often it went on the wire. A server's observer exists only while someone listens
 * (ServerContext.calls); otherwise the request path pays one `undefined` check and nothing else.
 */
import type { PendingRequest } from '../protocol/pending.js';

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
  at: number;
  start: number;
  sends: number;
}

export class CallObserver {
  /** The requests under way (only while observed): when each began and how often it was sent. */
  private readonly started = new Map<PendingRequest, Started>();

  constructor(
    private readonly server: string,
    private readonly emit: (call: CallEvent) => void,
    private readonly redact: (text: string) => string,
  ) {}

  /** A request made by the user (not a keepalive probe): set while it is issued. */
  private issuing = false;

  /** Issues a request of the user's: the request it creates is the one tracked. */
  issue<T>(send: () => T): T {
    this.issuing = true;
    try {
      return send();
    } finally {
      this.issuing = false;
    }
  }

  track(request: PendingRequest, promise: Promise<unknown>): void {
    if (!this.issuing) return;
    this.issuing = false;
    const started: Started = { at: Date.now(), start: performance.now(), sends: 0 };
    this.started.set(request, started);
    promise.then(
      (result) => this.settle(request, started, result, undefined),
      (error: unknown) => this.settle(request, started, undefined, error),
    );
  }

  /** The request goes on the wire (a first send, a replay, a retry). */
  onSend(request: PendingRequest): void {
    const started = this.started.get(request);
    if (started) started.sends++;
  }

  private settle(request: PendingRequest, started: Started, result: unknown, error: unknown): void {
    this.started.delete(request);
    const params = request.params;
    const tool = request.method === 'tools/call' && typeof params?.name === 'string' ? params.name : undefined;
    this.emit({
      server: this.server,
      method: request.method,
      tool,
      at: started.at,
      durationMs: Math.round((performance.now() - started.start) * 10) / 10,
      outcome: error === undefined ? 'ok' : 'error',
      error: error === undefined ? undefined : this.redact(describe(error)),
      sends: started.sends,
      params,
      result,
    });
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  return error.name && error.name !== 'Error' ? `${error.name}: ${error.message}` : error.message;
}
