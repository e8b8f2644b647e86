/**
 * Traces, through `@opentelemetry/api` only: the tracer of the registered provider (none while
 * the application registers no SDK: the callers then create nothing), trace context carried in
 * `params._meta` with the registered propagator, and one operation's span and duration.
 */
import {
  context,
  propagation,
  ProxyTracerProvider,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapSetter,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { ATTR, failureOf, isToolError } from './attributes.js';
import { INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION, type Instruments } from './metrics.js';

// What a ProxyTracerProvider delegates to while no SDK is registered (the API's no-op provider).
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();
let tracerFrom: TracerProvider | undefined;
let tracer: Tracer | undefined;

/** The registered provider's tracer; undefined while none is registered. Cheap: no allocation. */
export function currentTracer(): Tracer | undefined {
  const global = trace.getTracerProvider();
  // Another copy of the API registers its own proxy: duck-typed, not instanceof.
  const provider = 'getDelegate' in global ? (global as { getDelegate(): TracerProvider }).getDelegate() : global;
  if (provider === tracerFrom) return tracer;
  tracerFrom = provider;
  tracer =
    provider === NOOP_TRACER_PROVIDER ? undefined : provider.getTracer(INSTRUMENTATION_NAME, INSTRUMENTATION_VERSION);
  return tracer;
}

/** `params` with the context injected into `_meta` (traceparent, tracestate, baggage: whatever the propagator writes). */
export function withTraceContext(
  params: Record<string, unknown> | undefined,
  carrierContext: Context,
): Record<string, unknown> | undefined {
  const own = params?._meta;
  const meta: Record<string, unknown> = typeof own === 'object' && own !== null ? { ...own } : {};
  injected = false;
  propagation.inject(carrierContext, meta, RECORDING_SETTER);
  return injected ? { ...params, _meta: meta } : params;
}

/** Whether the propagator wrote anything (no propagator registered: nothing, and `params` stay as they were). */
let injected = false;
const RECORDING_SETTER: TextMapSetter<Record<string, unknown>> = {
  set(carrier, key, value) {
    carrier[key] = value;
    injected = true;
  },
};

/** A message from the server carries trace context in `params._meta`. */
export function carriedMeta(params: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const meta = params?._meta;
  if (typeof meta !== 'object' || meta === null || !('traceparent' in meta)) return undefined;
  return meta;
}

/** The remote parent a server's message names in `_meta`, over the active context. */
export function extractContext(meta: Record<string, unknown> | undefined): Context {
  const active = context.active();
  if (!meta) return active;
  return propagation.extract(active, meta, {
    keys: (carrier) => Object.keys(carrier),
    get: (carrier, key) => {
      const value = carrier[key];
      return typeof value === 'string' ? value : undefined;
    },
  });
}

/** Ends a span as failed, per the conventions: `error.type`, the JSON-RPC code, and the message as status. */
export function recordFailure(span: Span, error: unknown, redact: (text: string) => string): Attributes {
  const failure = failureOf(error);
  const attributes: Attributes = { [ATTR.errorType]: failure.type };
  if (failure.rpcCode !== undefined) attributes[ATTR.rpcStatusCode] = failure.rpcCode;
  span.setAttributes(attributes);
  span.setStatus({ code: SpanStatusCode.ERROR, message: redact(failure.message) });
  return attributes;
}

/**
 * One request or notification sent to the server: its CLIENT span (when tracing) and its
 * duration (when measuring). `params` is what goes on the wire (with the trace context).
 */
export class Operation {
  /** How many times it went on the wire: 2 and more are replays. */
  attempt = 0;
  /** It waited in the gate before its first send. */
  held = false;
  /** Answered 429/503 and about to be sent again: the next send is a retry, not a replay. */
  retryAfterStatus: number | undefined = undefined;
  private readonly startedAt = performance.now();

  constructor(
    readonly span: Span | undefined,
    readonly params: Record<string, unknown> | undefined,
    private readonly attributes: Attributes,
    private readonly instruments: Instruments | undefined,
    private readonly redact: (text: string) => string,
  ) {}

  /** Ends it when the answer (or the send, for a notification) settles. */
  settle(outcome: Promise<unknown>, method: string): void {
    outcome.then(
      (result) => this.end(isToolError(method, result) ? 'tool_error' : undefined, undefined),
      (error: unknown) => this.end(undefined, error),
    );
  }

  private end(toolError: 'tool_error' | undefined, error: unknown): void {
    let failure: Attributes | undefined;
    if (error !== undefined) {
      failure = this.span ? recordFailure(this.span, error, this.redact) : { [ATTR.errorType]: failureOf(error).type };
    } else if (toolError) {
      failure = { [ATTR.errorType]: toolError };
      this.span?.setAttributes(failure);
      this.span?.setStatus({ code: SpanStatusCode.ERROR, message: toolError });
    }
    this.span?.end();
    const seconds = (performance.now() - this.startedAt) / 1000;
    this.instruments?.operationDuration.record(seconds, failure ? { ...this.attributes, ...failure } : this.attributes);
  }
}
