/**
 * The cancellation of one host request on the direct path. A host can always cancel (a 2025
 * session's `notifications/cancelled`, a 2026-07-28 host closing its request), so every call
 * carries a signal to its upstream request; Node's AbortController makes an EventTarget per call,
 * and it with its listener was the largest single part of the gateway's own CPU per call (about
 * 10 µs in the profile of `bench/gateway.ts`). This is what the runtime reads of a signal —
 * `aborted`, `reason`, an `abort` listener added and removed — as its own requests already are
 * (`ExchangeSignal`, src/protocol/pending.ts). It goes only to this gateway's own upstream handles
 * (no interceptors there); the SDK's path gets a real AbortSignal (`linked()`).
 */
import type { ExchangeSignal } from '../protocol/pending.js';

export class CallSignal implements ExchangeSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] | undefined;

  addEventListener(_type: 'abort', listener: () => void, _options?: { once?: boolean }): void {
    (this.listeners ??= []).push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const index = this.listeners?.indexOf(listener) ?? -1;
    if (index >= 0) this.listeners!.splice(index, 1);
  }

  /** Aborts once: each listener runs once (as with `{ once: true }`). */
  abort(reason: unknown = new Error('the request was cancelled')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    for (const listener of listeners ?? []) listener();
  }

  /** As RequestOptions takes it: the runtime reads only the members above. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal;
  }

  /** A real AbortSignal that follows this one (the SDK's path: a web Request needs one). */
  linked(): AbortSignal {
    const controller = new AbortController();
    if (this.aborted) controller.abort(this.reason);
    else this.addEventListener('abort', () => controller.abort(this.reason));
    return controller.signal;
  }
}
