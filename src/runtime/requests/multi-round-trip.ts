/**
 * Multi round-trip requests (SEP-2322; spec 2026-07-28, basic/patterns/mrtr). A modern server
 * does not send requests to the client: it answers `tools/call`, `prompts/get` or
 * `resources/read` with an `InputRequiredResult` (`resultType: 'input_required'`) carrying the
 * requests it needs (`inputRequests`: elicitation, sampling, roots, by the server's own keys) and
 * an opaque `requestState`. The client then, in one round:
 *
 * 1. answers every embedded request through the same handlers as the 2025 era's server requests
 *    (in parallel; a handler that throws, or a kind no handler answers, fails the call);
 * 2. sends the original request again, as a new request (new JSON-RPC id), with `inputResponses`
 *    (same keys) and the `requestState` echoed byte for byte, or no `requestState` at all when
 *    the result had none;
 * 3. reads the answer: a result without `resultType`, or with any other than `input_required`,
 *    is the final one; another `InputRequiredResult` is the next round, up to `maxRounds`.
 *
 * The state of a round belongs to that call alone (it lives in this loop's locals): requests sent
 * in parallel never carry each other's responses or state.
 */
import { RequestAbortedError, describeError } from '../../core/errors.js';
import { InputRequestError, InputRoundsExceededError } from './input-errors.js';
import { NoHandlerError, type HandlerContext } from '../server-input/server-requests.js';

/** The methods a server may answer with an `InputRequiredResult`. */
const ASKING_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);
export const INPUT_REQUIRED = 'input_required';
/** Retries of one request before it fails (as the official v2 client). */
export const DEFAULT_MAX_INPUT_ROUNDS = 10;

export interface InputRequest {
  method: string;
  params?: Record<string, unknown>;
}

export interface InputRequiredResult {
  resultType: typeof INPUT_REQUIRED;
  inputRequests?: Record<string, InputRequest>;
  requestState?: string;
}

export function mayRequireInput(method: string): boolean {
  return ASKING_METHODS.has(method);
}

/** `resultType` missing means complete (spec: earlier servers do not send it). */
export function isInputRequired(result: unknown): result is InputRequiredResult {
  return (result as { resultType?: unknown } | null)?.resultType === INPUT_REQUIRED;
}

/** What answering a set of input requests needs (MRTR rounds here, a modern task's `inputRequests` in src/tasks/). */
export interface InputAnswering {
  server: string;
  /** The request the input is for (named in errors). */
  method: string;
  signal: AbortSignal | undefined;
  /** One embedded request's result from the user's handlers (server-requests.ts). */
  answer(method: string, params: Record<string, unknown>, context: HandlerContext): Promise<Record<string, unknown>>;
}

export interface RoundTrip extends InputAnswering {
  /** The caller's params (with its `_meta`), without any round's responses or state. */
  params: Record<string, unknown> | undefined;
  maxRounds: number;
  /** Sends the request again with these params: a new pending request, with a new id. */
  send(params: Record<string, unknown>): Promise<unknown>;
  /** Telemetry: a round begins. */
  onRound?(round: number, result: InputRequiredResult): void;
}

/** Runs the rounds that follow the first `InputRequiredResult` until the server completes the request. */
export async function completeRounds(first: InputRequiredResult, trip: RoundTrip): Promise<unknown> {
  let result: unknown = first;
  for (let round = 1; isInputRequired(result); round++) {
    if (round > trip.maxRounds)
      throw new InputRoundsExceededError(trip.method, trip.maxRounds, result.inputRequests, { server: trip.server });
    trip.onRound?.(round, result);
    const inputResponses = await answerInputRequests(result.inputRequests, trip);
    result = await trip.send(retryParams(trip.params, inputResponses, result.requestState));
  }
  return result;
}

/** The original params, plus this round's responses and the server's state (only if it sent one). */
function retryParams(
  params: Record<string, unknown> | undefined,
  inputResponses: Record<string, unknown> | undefined,
  requestState: string | undefined,
): Record<string, unknown> {
  const retry: Record<string, unknown> = { ...params };
  delete retry.inputResponses;
  delete retry.requestState;
  if (inputResponses !== undefined) retry.inputResponses = inputResponses;
  if (requestState !== undefined) retry.requestState = requestState;
  return retry;
}

/**
 * Answers every request of the set through the handlers, in parallel, by key; the first handler
 * that fails (or a kind no handler answers) fails them all: InputRequestError.
 */
export async function answerInputRequests(
  requests: Record<string, InputRequest> | undefined,
  trip: InputAnswering,
): Promise<Record<string, unknown> | undefined> {
  if (requests === undefined || typeof requests !== 'object') return undefined; // state only: retry at once
  if (trip.signal?.aborted) throw aborted(trip);
  const controller = new AbortController();
  const stop = () => controller.abort(trip.signal?.reason);
  trip.signal?.addEventListener('abort', stop, { once: true });
  try {
    const answers = Promise.all(
      Object.entries(requests).map(async ([key, request]) => {
        const context: HandlerContext = { server: trip.server, signal: controller.signal, requestId: key };
        return [key, await answerOne(key, request, context, trip)] as const;
      }),
    );
    // A handler that ignores its signal does not keep an aborted call waiting.
    const entries = await (trip.signal ? untilAborted(answers, controller.signal, trip) : answers);
    return Object.fromEntries(entries);
  } finally {
    trip.signal?.removeEventListener('abort', stop);
    controller.abort('the round is over'); // handlers still running for a failed round stop
  }
}

async function answerOne(
  key: string,
  request: InputRequest,
  context: HandlerContext,
  trip: InputAnswering,
): Promise<Record<string, unknown>> {
  const method = typeof request?.method === 'string' ? request.method : '(no method)';
  try {
    return await trip.answer(method, request.params ?? {}, context);
  } catch (error) {
    if (context.signal.aborted && trip.signal?.aborted) throw aborted(trip);
    const reason =
      error instanceof NoHandlerError
        ? `${error.message} (the server asked for input this client did not declare)`
        : `the handler failed: ${describeError(error)}`;
    throw new InputRequestError(trip.method, key, method, reason, { server: trip.server, cause: error });
  }
}

/** A span event per round: which kinds of input the server asked for, never their content. */
export function roundEvent(round: number, result: InputRequiredResult): [string, Record<string, string | number>] {
  const kinds = Object.values(result.inputRequests ?? {}).map((request) => String(request?.method));
  return ['input required', { 'mcp_supervisor.round': round, 'mcp_supervisor.input_requests': kinds.join(',') }];
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, trip: InputAnswering): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(aborted(trip));
    signal.addEventListener('abort', stop, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}

function aborted(trip: InputAnswering): RequestAbortedError {
  return new RequestAbortedError(trip.method, { server: trip.server, cause: trip.signal?.reason });
}
