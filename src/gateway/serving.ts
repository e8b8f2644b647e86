/**
 * A request for a server that is not serving is held: it waits for the server to be ready,
 * within the gateway's hold time and the host's cancellation, then goes on or fails with an
 * error that names the server and why. A server that is `failed` fails the request at once.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import { describeError, McpError, UnknownToolError } from '../core/errors.js';
import type { ServerHandle } from '../handle/server-handle.js';
import { isDownForGood } from '../handle/status.js';
import { isEnded } from '../../machines/connection.machine.js';

/** Why a server could not answer: its name, its state, its last error. Never a secret (status() is redacted). */
export class ServerUnavailableError extends Error {
  override name = 'ServerUnavailableError';
  constructor(
    readonly server: string,
    readonly state: string,
    reason: string | undefined,
  ) {
    super(`server '${server}' is unavailable (${state})${reason ? `: ${reason}` : ''}`);
  }
}

/**
 * Whether the server is ready now, as its transitions said: asked on every request, where
 * `status()` would derive a whole status. Known from the first ask on (one listener per handle).
 */
export function isReady(handle: ServerHandle): boolean {
  let known = readiness.get(handle);
  if (!known) {
    const seen = { ready: handle.status().state === 'ready' };
    handle.on('transition', (event) => void (seen.ready = event.to === 'ready'));
    readiness.set(handle, seen);
    known = seen;
  }
  return known.ready;
}

const readiness = new WeakMap<ServerHandle, { ready: boolean }>();

/** Resolves once the server is ready; rejects with ServerUnavailableError after `holdMs`, at once when failed. */
export function untilServing(handle: ServerHandle, holdMs: number, signal: AbortSignal | undefined): Promise<void> {
  const first = handle.status();
  if (first.state === 'ready') return Promise.resolve();
  if (isDownForGood(first.state))
    return Promise.reject(new ServerUnavailableError(handle.name, first.state, first.lastError));
  return new Promise((resolve, reject) => {
    const finish = (error?: Error) => {
      clearTimeout(timer);
      off();
      signal?.removeEventListener('abort', aborted);
      if (error) reject(error);
      else resolve();
    };
    const unavailable = () => {
      const status = handle.status();
      return new ServerUnavailableError(
        handle.name,
        status.state,
        status.lastError ?? 'not ready within the hold time',
      );
    };
    const aborted = () =>
      finish(new ServerUnavailableError(handle.name, handle.status().state, 'the request was cancelled'));
    const timer = setTimeout(() => finish(unavailable()), holdMs);
    const off = handle.on('transition', (event) => {
      if (event.to === 'ready') finish();
      else if (isEnded(event.to)) finish(unavailable());
    });
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

/** What the host is told when a forwarded request failed: the server's own JSON-RPC errors pass through. */
export function failureText(server: string, error: unknown): string {
  if (error instanceof ServerUnavailableError) return error.message;
  if (error instanceof UnknownToolError) return error.message;
  return `server '${server}' could not answer: ${describeError(error)}`;
}

/** An upstream JSON-RPC error, to be passed through unchanged. */
export function upstreamRpcError(error: unknown): { code: number; message: string; data: unknown } | undefined {
  return error instanceof McpError ? { code: error.rpcCode, message: error.rpcMessage, data: error.data } : undefined;
}

/** A forwarded request: the server's JSON-RPC errors pass through; any other failure names the server. */
export async function forwarded<T>(server: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof ProtocolError) throw error; // already the host's error (an input round's state)
    const rpc = upstreamRpcError(error);
    if (rpc) throw new ProtocolError(rpc.code, rpc.message, rpc.data);
    throw new ProtocolError(-32603, failureText(server, error));
  }
}
