/**
 * A 2026-07-28 host is not sent requests: what a server asks of the user (elicitation, sampling,
 * roots) reaches it as `input_required` rounds of its own request (multi round-trip requests).
 * An exchange is one host tools/call whose upstream call is under way: when the server asks
 * something, the host's request is answered `input_required` with the questions under keys and a
 * `requestState` naming the exchange; the upstream call keeps waiting; when the host sends the
 * request again with `inputResponses` and that state, the answers go to the server and the host
 * waits for the result (or the next questions) as before. The state is the exchange's random id,
 * kept here: it carries nothing, and an unknown or expired one is refused.
 */
import { randomUUID } from 'node:crypto';
import type { RequestOptions } from '../runtime/context/events.js';

export type InputMethod = 'elicitation/create' | 'sampling/createMessage' | 'roots/list';

interface Question {
  method: InputMethod;
  params: Record<string, unknown>;
  resolve(answer: Record<string, unknown>): void;
  /** Put to the host (in an `input_required` round) and not answered yet. */
  asked: boolean;
}

export type Turn<T> = { done: T } | { inputRequests: Record<string, { method: InputMethod; params: object }> };

/** How long an exchange waits for the host's next round before its upstream call is cancelled. */
export const EXCHANGE_TTL_MS = 10 * 60_000;

/**
 * A server's question kept under `key` until the host answers it (the entry's `resolve`), or
 * `signal` cancels it: then it is forgotten and the server's request fails with the reason.
 */
export function keepQuestion<Q>(
  questions: Map<string, Q>,
  key: string,
  signal: AbortSignal,
  entry: (resolve: (answer: Record<string, unknown>) => void) => Q,
): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    questions.set(key, entry(resolve));
    signal.addEventListener(
      'abort',
      () => {
        questions.delete(key);
        reject(signal.reason instanceof Error ? signal.reason : new Error('the question was cancelled'));
      },
      { once: true },
    );
  });
}

export class InputExchange<T> {
  readonly id = randomUUID();
  /** Cancels the upstream call (the host went away, or never came back). */
  readonly abort = new AbortController();
  private readonly questions = new Map<string, Question>();
  private outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
  private wake: (() => void) | undefined;
  private next = 0;
  private expiry: NodeJS.Timeout | undefined;
  /** The upstream call's progress, to the host's round waiting now (its request and token); none between rounds. */
  progress: RequestOptions['onprogress'];

  /** `start` makes the upstream call; its questions come through ask(). `method`: the host's request it answers. */
  constructor(
    start: (exchange: InputExchange<T>) => Promise<T>,
    readonly method = 'tools/call',
  ) {
    start(this).then(
      (value) => this.settle({ ok: true, value }),
      (error: unknown) => this.settle({ ok: false, error }),
    );
  }

  /** A question of the upstream server: answered when the host answers it. */
  ask(method: InputMethod, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown>> {
    const answer = keepQuestion(this.questions, `input-${++this.next}`, signal, (resolve) => ({
      method,
      params,
      resolve,
      asked: false,
    }));
    this.wake?.();
    return answer;
  }

  /** The host's answers to the questions it was put; a question it left unanswered is put again. */
  answer(responses: Record<string, unknown> | undefined): void {
    this.hold(false);
    for (const [key, question] of this.questions) {
      const answer = responses?.[key];
      if (!question.asked) continue;
      question.asked = false;
      if (typeof answer === 'object' && answer !== null) {
        this.questions.delete(key);
        question.resolve(answer as Record<string, unknown>);
      }
    }
  }

  /**
   * Waits for the upstream result, or for questions to put to the host. `signal` is the host's
   * request: aborted (the host went away) it cancels the upstream call.
   */
  async turn(signal: AbortSignal): Promise<Turn<T>> {
    const cancel = () => this.abort.abort(signal.reason);
    signal.addEventListener('abort', cancel, { once: true });
    try {
      for (;;) {
        if (this.outcome) {
          if (this.outcome.ok) return { done: this.outcome.value };
          throw this.outcome.error;
        }
        const inputRequests: Record<string, { method: InputMethod; params: object }> = {};
        let asking = false;
        for (const [key, question] of this.questions) {
          if (question.asked) continue;
          question.asked = asking = true;
          inputRequests[key] = { method: question.method, params: question.params };
        }
        if (asking) {
          this.hold(true);
          return { inputRequests };
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    } finally {
      signal.removeEventListener('abort', cancel);
    }
  }

  /** While the host is away answering, the exchange lives at most EXCHANGE_TTL_MS. */
  private hold(waiting: boolean): void {
    clearTimeout(this.expiry);
    this.expiry = undefined;
    if (!waiting) return;
    this.expiry = setTimeout(() => this.abort.abort(new Error('the host did not answer in time')), EXCHANGE_TTL_MS);
    this.expiry.unref();
  }

  private settle(outcome: NonNullable<InputExchange<T>['outcome']>): void {
    this.outcome = outcome;
    this.hold(false);
    this.wake?.();
  }
}

/** The exchanges waiting for their host's next round, by their `requestState`. */
export class InputExchanges {
  private readonly waiting = new Map<string, InputExchange<unknown>>();

  /** Kept until the host comes back, or the upstream call ends. */
  park(exchange: InputExchange<unknown>): void {
    this.waiting.set(exchange.id, exchange);
    exchange.abort.signal.addEventListener('abort', () => this.waiting.delete(exchange.id), { once: true });
  }

  /** The exchange a round's `requestState` names, for the same method only. */
  take(state: unknown, method = 'tools/call'): InputExchange<unknown> | undefined {
    if (typeof state !== 'string') return undefined;
    const exchange = this.waiting.get(state);
    if (exchange?.method !== method) return undefined;
    this.waiting.delete(state);
    return exchange;
  }

  close(): void {
    for (const exchange of this.waiting.values()) exchange.abort.abort(new Error('the gateway closed'));
    this.waiting.clear();
  }
}
