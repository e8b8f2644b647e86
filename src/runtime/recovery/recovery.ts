/**
 * Where a request goes when its send fails or the connection changes under it (one server's
 * recovery, built by server-runtime.ts):
 *
 * - `onSendFailure()` reads a failure as evidence (evidence.ts), puts the request where it
 *   belongs (parked for replay, in doubt, or failed) and tells the connection machine;
 * - the machine decides, and calls back the actions at the end of this file (`releaseRequests`
 *   replays what was parked, `rejectWaitingRequests` ends it).
 */
import { isCurrentSession } from '../../../machines/connection.machine.js';
import {
  AuthorizationError,
  ConnectionClosedError,
  isAbortError,
  OutcomeUnknownError,
  type AuthorizationRequiredError,
} from '../../core/errors.js';
import type { RequestId } from '../../protocol/jsonrpc.js';
import type { ExchangeSignal, PendingRequest } from '../../protocol/pending.js';
import type { ReadOnlyContext } from '../context/server-context.js';
import { readEvidence } from './evidence.js';
import type { OriginMembership } from './origin-membership.js';
import { mayReplay, ToolSafety } from './replay-policy.js';

/** What recovery sends again: the request path (requests/request-path.ts). */
export interface Resender {
  dispatch(request: PendingRequest, handshake: boolean): void;
  notify(method: string, params?: Record<string, unknown>): Promise<void>;
}

export class Recovery {
  /** Why the gate closed for good, for the requests that arrive afterwards. */
  private closedReason = 'the connection is closed';
  /** Sent requests that timed out in a row with nothing answered: evidence the server froze. */
  unanswered = 0;
  /** What the server says of its tools: which calls may be replayed (replay-policy.ts); built by the first tools list. */
  private tools: ToolSafety | undefined = undefined;

  constructor(
    private readonly context: ReadOnlyContext,
    private readonly requests: Resender,
    /** Told when requests start to wait and when the gate empties (a capped backoff while they wait). */
    private readonly origin?: Pick<OriginMembership, 'onWaiting' | 'onDrained'>,
  ) {}

  /** A request was held (issued while the connection is not serving). */
  onHeld(): void {
    this.origin?.onWaiting();
  }

  /** One page of a `tools/list` result: which tool calls are safe to send again. */
  learnTools(result: unknown): void {
    (this.tools ??= new ToolSafety()).learn(result);
  }

  // ---- evidence: what a failed request says, and where the request goes

  /** A send failed: its evidence decides where the request goes, and what the machine is told. */
  onSendFailure(request: PendingRequest, error: unknown): void {
    const { pending, gate, authorization } = this.context;
    if (!pending.isPending(request) || isAbortError(error)) return; // the abort listener settles it
    if (this.context.pastGate.has(request)) return pending.fail(request, toError(error));
    if (authorization.isFixable(error) && request.method !== 'initialize') {
      this.onRefused(request, error);
      return;
    }
    if (request.method === 'initialize') {
      // The handshake's own failure is the machine's business (its actor's error).
      pending.fail(request, toError(error));
      return;
    }
    const evidence = readEvidence(error);
    const session = this.context.session();
    switch (evidence.kind) {
      case 'session lost':
        // Never processed: replay after one re-initialize. A refusal of an older session is
        // just sent again: this session is fine.
        if (!isCurrentSession(session, evidence.generation)) return this.resendOrPark(request);
        this.waitOrFail(request);
        return this.context.tell({
          type: 'SESSION_EXPIRED',
          generation: evidence.generation,
          evidence: evidence.evidence,
        });
      case 'session in doubt':
        if (!isCurrentSession(session, evidence.generation)) return pending.fail(request, toError(error));
        request.sent = false;
        gate.doubt(request, toError(error));
        pending.waits(request);
        return this.context.tell({
          type: 'SESSION_IN_DOUBT',
          generation: evidence.generation,
          evidence: evidence.evidence,
        });
      case 'unreachable':
        // Never sent: it waits for the connection to come back, within its own timeout.
        this.waitOrFail(request);
        // A stdio process that is gone: its loss, with the exit and the stderr the error names.
        if (error instanceof ConnectionClosedError && error.unsent)
          return this.context.tell({ type: 'CONNECTION_LOST', error: error.message, fatal: error.fatal });
        return this.context.tell({ type: 'SERVER_UNREACHABLE', error: `server unreachable (${evidence.reason})` });
      case 'broken':
        this.onOutcomeUnknown(request, evidence.reason, error);
        if (session === undefined) return;
        if (evidence.sessionRefused)
          return this.context.tell({
            type: 'SESSION_EXPIRED',
            generation: session.sessionGeneration,
            evidence: 'resume refused',
          });
        return this.context.tell({
          type: 'SESSION_IN_DOUBT',
          generation: session.sessionGeneration,
          evidence: evidence.reason,
        });
      case 'request':
        return pending.fail(request, toError(error));
    }
  }

  /** Sent, and the connection broke before the answer: replay it if repeating is safe, else say so. */
  onOutcomeUnknown(request: PendingRequest, reason: string, cause: unknown): void {
    if (mayReplay(request.method, request.params, request.retry, this.tools)) this.waitOrFail(request);
    else
      this.context.pending.fail(
        request,
        new OutcomeUnknownError(request.method, reason, { server: this.context.name, cause }),
      );
  }

  /** 401/403 on a request: park it and authorize once, unless newer credentials already exist. */
  private onRefused(request: PendingRequest, error: AuthorizationRequiredError): void {
    // Another refusal already brought new credentials: just send it again.
    if (this.context.authorization.isOutdated(error)) return this.resendOrPark(request);
    this.waitOrFail(request);
    this.requestAuthorization(error);
  }

  /** One authorization for this refusal: the machine's `authorizing` state runs it. */
  requestAuthorization(error: AuthorizationRequiredError): void {
    this.context.authorization.remember(error);
    this.context.tell({ type: 'AUTHORIZATION_REQUIRED', error: error.message });
  }

  /** Sends a request again (with a new id) while serving; otherwise it waits for the next release. */
  private resendOrPark(request: PendingRequest): void {
    if (this.context.gate.phase !== 'open') return this.waitOrFail(request);
    this.context.pending.renumber(request);
    this.requests.dispatch(request, false);
  }

  /** Parks a request for the next release (it is off the wire again), unless the gate closed for good. */
  waitOrFail(request: PendingRequest): void {
    request.sent = false;
    if (this.context.gate.phase === 'closed') this.context.pending.fail(request, this.closedError());
    else {
      this.context.gate.park(request);
      this.context.pending.waits(request);
      this.origin?.onWaiting();
    }
  }

  /** A sent request timed out: `probeAfterTimeouts` of them in a row, with nothing answered, put the connection in doubt. */
  onTimedOut(request: PendingRequest): void {
    const { probeAfterTimeouts } = this.context.config;
    if (!request.sent || probeAfterTimeouts === 0) return;
    if (++this.unanswered < probeAfterTimeouts) return;
    this.unanswered = 0;
    const generation = this.context.session()?.sessionGeneration;
    const evidence = `${probeAfterTimeouts} requests in a row timed out with nothing answered`;
    if (generation !== undefined) this.context.tell({ type: 'SESSION_IN_DOUBT', generation, evidence });
  }

  /**
   * Modern era: a -32022 on an ordinary request means the server changed the versions it speaks
   * (an upgrade): the request was not processed, so it waits while the machine discovers again.
   */
  onVersionRefused(id: RequestId | null, data: unknown): boolean {
    const request = id === null ? undefined : this.context.pending.get(id);
    if (!request || this.context.pastGate.has(request)) return false;
    // A server that still lists our version refuses for another reason: discovering again would loop.
    const supported = (data as { supported?: unknown } | undefined)?.supported;
    if (Array.isArray(supported) && supported.includes(this.context.facts?.envelope?.protocolVersion)) return false;
    const generation = this.context.session()?.sessionGeneration;
    if (generation === undefined) return false;
    this.waitOrFail(request);
    this.context.tell({
      type: 'SESSION_EXPIRED',
      generation,
      evidence: 'protocol version no longer supported (-32022)',
    });
    return true;
  }

  /** The transport died: what was on the wire has an unknown outcome; the connection reconnects. */
  onConnectionLost(error: Error): void {
    const { pending, pastGate } = this.context;
    const fatal = (error as { fatal?: unknown }).fatal === true; // e.g. a stdio server that died before its first handshake
    for (const request of pending.sentRequests()) {
      if (fatal || request.method === 'initialize' || pastGate.has(request)) {
        const closed = new ConnectionClosedError(`the connection was lost: ${error.message}`, {
          server: this.context.name,
          retryable: !fatal,
          fatal,
          cause: error,
        });
        pending.fail(request, closed);
      } else {
        this.onOutcomeUnknown(request, `the connection was lost (${error.message})`, error);
      }
    }
    this.context.tell({ type: 'CONNECTION_LOST', error: error.message, fatal });
  }

  /**
   * A resume GET was refused (401/403). The same one authorization as for a refused request;
   * true once new credentials are in place, so the stream resumes with them.
   */
  renewCredentials(refusal: AuthorizationRequiredError, signal: ExchangeSignal | undefined): Promise<boolean> {
    const authorization = this.context.authorization;
    if (!authorization.isFixable(refusal)) return Promise.resolve(false);
    if (authorization.isOutdated(refusal)) return Promise.resolve(true);
    const renewed = authorization.nextRenewal(signal);
    this.requestAuthorization(refusal);
    return renewed;
  }

  // ---- the machine's actions on requests

  holdRequests(): void {
    if (!this.context.closing) this.context.gate.phase = 'holding';
  }

  /** Parked requests first (never processed, or safe to repeat), then held ones, each with a new id. */
  releaseRequests(): void {
    const { gate, pending } = this.context;
    gate.phase = 'open';
    this.origin?.onDrained();
    for (const request of gate.drain()) {
      if (!pending.isPending(request)) continue;
      pending.renumber(request);
      this.requests.dispatch(request, false);
    }
    // A roots change made while the same session was in doubt is announced now.
    if (this.context.savedSessionState?.takeRootsNotice())
      void this.requests.notify('notifications/roots/list_changed').catch(ignore);
  }

  rejectWaitingRequests(reason: string): void {
    this.context.gate.phase = 'closed';
    this.closedReason = reason; // redacted when an error is made of it: most servers have nobody waiting
    this.origin?.onDrained();
    const waiting = this.context.gate.drainAll();
    // No error (and its stack) for a server nobody waits on: stop() of 10,000 servers.
    if (waiting.length === 0) return;
    const error = this.closedError();
    for (const request of waiting) this.context.pending.fail(request, error);
  }

  /** An authorization failed: the requests refused for want of it fail with its error. */
  failParkedRequests(failure: Error | undefined, lastError: string | undefined): void {
    const error = failure ?? new AuthorizationError(lastError ?? 'authorization failed', { server: this.context.name });
    for (const request of this.context.gate.drainParked()) this.context.pending.fail(request, error);
  }

  settleDoubtfulRequests(lost: boolean): void {
    for (const { request, error } of this.context.gate.settleDoubtful(lost)) this.context.pending.fail(request, error);
  }

  closedError(): ConnectionClosedError {
    return new ConnectionClosedError(this.context.redact(this.closedReason), { server: this.context.name });
  }
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function ignore(): void {}
