/**
 * A host's `tools/call`, made on its upstream server: one code for the SDK server's handlers
 * (downstream.ts) and the direct HTTP path (direct-path.ts), so both answer alike.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import type { CatalogTool } from '../catalog/types.js';
import type { CallToolResult } from '../protocol/messages.js';
import type { RequestOptions } from '../runtime/context/events.js';
import type { ServerHandle } from '../handle/server-handle.js';
import { InputExchange, type InputExchanges, type Turn } from './input-exchange.js';
import { hostTakesTasks, startTask, type CreatedTask } from './modern-tasks.js';
import type { ResolvedGatewayOptions } from './options.js';
import { RequestTimeoutError } from '../core/errors.js';
import { failureText, isReady, ServerUnavailableError, upstreamRpcError } from './serving.js';
import type { CallHost, Sessions } from './sessions.js';
import type { RequestId } from '../protocol/jsonrpc.js';

export interface ToolCallParts {
  sessions: Sessions;
  options: ResolvedGatewayOptions;
  /** 2026-07-28 tool calls waiting for their host's input round. */
  exchanges: InputExchanges;
}

/** The call on the upstream server, held while it is not serving (serving.ts); no promise of its own when ready. */
export function callUpstream(
  handle: ServerHandle,
  tool: CatalogTool,
  args: Record<string, unknown>,
  holdMs: number,
  options: RequestOptions,
): Promise<CallToolResult> {
  // Held in the server's own gate, not here: a call waiting there hurries the reconnect (about
  // 1 s + one round trip, as for the library's callers), and `holdMs` bounds its wait, a call
  // made the moment the server died included.
  const held: RequestOptions = { ...options, holdMs };
  if (isReady(handle)) return handle.callTool(tool.originalName, args, held).catch((e) => holdEnded(handle, e));
  const state = handle.status();
  if (!mayHold(state)) return Promise.reject(new ServerUnavailableError(handle.name, state.state, state.lastError));
  return handle.callTool(tool.originalName, args, held).catch((e) => holdEnded(handle, e));
}

/** A server that may still come back: down and retrying, or failed with a revival due. */
function mayHold(status: { state: string; nextAttemptAt?: number | undefined }): boolean {
  if (status.state === 'failed') return status.nextAttemptAt !== undefined;
  return status.state !== 'closed' && status.state !== 'disabled';
}

/** A call that timed out waiting for its server (never sent): the server is unavailable, and why. */
function holdEnded(handle: ServerHandle, error: unknown): never {
  if (!(error instanceof RequestTimeoutError) || error.waitedFor === undefined) throw error;
  const status = handle.status();
  throw new ServerUnavailableError(handle.name, status.state, status.lastError ?? error.waitedFor);
}

/** A failed call: the server's JSON-RPC error passes through (thrown); anything else is a result the model reads. */
export function callFailure(server: string, error: unknown): CallToolResult {
  const rpc = upstreamRpcError(error);
  if (rpc) throw new ProtocolError(rpc.code, rpc.message, rpc.data);
  const text = error instanceof ServerUnavailableError ? error.message : failureText(server, error);
  return { content: [{ type: 'text', text }], isError: true };
}

export interface ModernCall {
  arguments: Record<string, unknown>;
  requestId: RequestId;
  /** The host's request: aborted, it cancels the upstream call. */
  signal: AbortSignal;
  /** The `requestState` the host sent back (a later round), if any. */
  requestState: unknown;
  inputResponses: Record<string, unknown> | undefined;
  /** Progress passed on, when the host asked for it (the signal is the exchange's own). */
  progress: Omit<RequestOptions, 'signal'>;
}

export type ModernTurn<T = CallToolResult> =
  { done: T } | { inputRequests: Record<string, object>; requestState: string };

/**
 * A 2026-07-28 host's tool call: the server's questions come back to the host as `input_required`
 * rounds (input-exchange.ts); a round that carries the `requestState` it was given resumes the
 * upstream call with the host's answers.
 */
export async function modernToolCall(
  parts: ToolCallParts,
  host: CallHost,
  tool: CatalogTool,
  handle: ServerHandle,
  call: ModernCall,
): Promise<ModernTurn<CallToolResult | CreatedTask>> {
  try {
    const asTask = hostTakesTasks(host.getClientCapabilities());
    return await modernExchange(parts, host, tool.server, 'tools/call', call, async (options) => {
      // A host with the tasks extension gets the upstream task when there is one (modern-tasks.ts).
      const started = asTask ? await startTask(handle, tool, call.arguments, parts.options.holdMs, options) : undefined;
      return started ?? (await callUpstream(handle, tool, call.arguments, parts.options.holdMs, options));
    });
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    return { done: callFailure(tool.server, error) };
  }
}

/**
 * One 2026-07-28 request (`method`) made on upstream `server` by `send`, in input rounds: the
 * server's questions during it are put to the host as `input_required`; a later round naming the
 * `requestState` resumes it with the host's answers. An invalid or expired state is refused
 * (ProtocolError); the upstream failure is thrown as it came. Each round is a request of its own
 * (its own id, stream and progress token): the upstream call's progress goes to the round the
 * host is waiting on, under that round's token, and is dropped between rounds. Progress is asked
 * of the server when the first round asks for it.
 */
export async function modernExchange<T>(
  parts: ToolCallParts,
  host: CallHost,
  server: string,
  method: string,
  call: Omit<ModernCall, 'arguments' | 'progress'> & { progress?: ModernCall['progress'] },
  send: (options: RequestOptions) => Promise<T>,
): Promise<ModernTurn<T>> {
  const { sessions, exchanges } = parts;
  const onprogress = call.progress?.onprogress;
  let exchange: InputExchange<unknown>;
  if (call.requestState !== undefined) {
    const waiting = exchanges.take(call.requestState, method);
    if (!waiting)
      throw new ProtocolError(-32602, 'Invalid or expired requestState', { reason: 'invalid_request_state' });
    exchange = waiting;
    exchange.progress = onprogress;
    exchange.answer(call.inputResponses);
  } else {
    exchange = new InputExchange(async (self) => {
      const asked = sessions.beginCall(server, host, call.requestId, (question, params, asker) =>
        self.ask(question, params, asker),
      );
      const options: RequestOptions = { signal: self.abort.signal };
      if (onprogress) {
        options.resetTimeoutOnProgress = true;
        options.onprogress = (progress) => self.progress?.(progress);
      }
      try {
        return await send(options);
      } finally {
        sessions.endCall(server, asked);
      }
    }, method);
    exchange.progress = onprogress;
  }
  const turn: Turn<unknown> = await exchange.turn(call.signal);
  if ('done' in turn) return { done: turn.done as T };
  exchange.progress = undefined; // this round's request is answered: its token is no longer active
  exchanges.park(exchange);
  return { inputRequests: turn.inputRequests, requestState: exchange.id };
}
