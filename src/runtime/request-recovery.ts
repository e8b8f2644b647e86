/**
 * Where a request goes when its send fails or the connection changes under it (the evidence
 * part of one server's runtime, see server-runtime.ts):
 *
 * - `onSendFailure()` reads a failure as evidence (evidence.ts), puts the request where it
 *   belongs (parked for replay, in doubt, or failed) and tells the connection machine;
 * - the machine decides, and calls back the actions at the end of this file (`releaseRequests`
 *   replays what was parked, `rejectWaitingRequests` ends it).
 */
import type { ConnectionEvent } from '../../machines/connection.machine.js';
import {
  AuthorizationError,
  ConnectionClosedError,
  isAbortError,
  OutcomeUnknownError,
  type AuthorizationRequiredError,
} from '../core/errors.js';
import type { RequestId } from '../protocol/jsonrpc.js';
import type { PendingRequest } from '../protocol/pending.js';
import { ConnectionEffects, type ConnectionRef } from './connection-effects.js';
import { readEvidence } from './evidence.js';
import { mayReplay, ToolSafety } from './replay-policy.js';

export abstract class RequestRecovery extends ConnectionEffects {
  /** Why the gate closed for good, for the requests that arrive afterwards. */
  private closedReason = 'the connection is closed';
  /** Sent requests that timed out in a row with nothing answered: evidence the server froze. */
  protected unanswered = 0;
  /** What the server says of its tools: which calls may be replayed (replay-policy.ts). */
  protected readonly tools = new ToolSafety();

  abstract notify(method: string, params?: Record<string, unknown>): Promise<void>;

  // ---- evidence: what a failed request says, and where the request goes

  /** A send failed: its evidence decides where the request goes, and what the machine is told. */
  protected onSendFailure(request: PendingRequest, error: unknown): void {
    if (!this.pending.isPending(request) || isAbortError(error)) return; // the abort listener settles it
    if (this.pastGate.has(request)) return this.pending.fail(request, toError(error));
    if (this.authorization.isFixable(error) && request.method !== 'initialize') {
      this.onRefused(request, error);
      return;
    }
    if (request.method === 'initialize') {
      // The handshake's own failure is the machine's business (its actor's error).
      this.pending.fail(request, toError(error));
      return;
    }
    const evidence = readEvidence(error);
    const generation = this.session()?.sessionGeneration;
    switch (evidence.kind) {
      case 'session lost':
        // Never processed: replay after one re-initialize. A refusal of an older session is
        // just sent again: this session is fine.
        if (evidence.generation !== generation) return this.resendOrPark(request);
        this.waitOrFail(request);
        return this.tell({ type: 'SESSION_EXPIRED', generation, evidence: evidence.evidence });
      case 'session in doubt':
        if (evidence.generation !== generation) return this.pending.fail(request, toError(error));
        request.sent = false;
        this.gate.doubt(request, toError(error));
        return this.tell({ type: 'SESSION_IN_DOUBT', generation, evidence: evidence.evidence });
      case 'unreachable':
        // Never sent: it waits for the connection to come back, within its own timeout.
        this.waitOrFail(request);
        return this.tell({ type: 'SERVER_UNREACHABLE', error: `server unreachable (${evidence.reason})` });
      case 'broken':
        this.onOutcomeUnknown(request, evidence.reason, error);
        if (generation === undefined) return;
        if (evidence.sessionRefused)
          return this.tell({ type: 'SESSION_EXPIRED', generation, evidence: 'resume refused' });
        return this.tell({ type: 'SESSION_IN_DOUBT', generation, evidence: evidence.reason });
      case 'request':
        return this.pending.fail(request, toError(error));
    }
  }

  /** Sent, and the connection broke before the answer: replay it if repeating is safe, else say so. */
  protected onOutcomeUnknown(request: PendingRequest, reason: string, cause: unknown): void {
    if (mayReplay(request.method, request.params, request.retry, this.tools)) this.waitOrFail(request);
    else this.pending.fail(request, new OutcomeUnknownError(request.method, reason, { server: this.name, cause }));
  }

  /** 401/403 on a request: park it and authorize once, unless newer credentials already exist. */
  private onRefused(request: PendingRequest, error: AuthorizationRequiredError): void {
    // Another refusal already brought new credentials: just send it again.
    if (this.authorization.isOutdated(error)) return this.resendOrPark(request);
    this.waitOrFail(request);
    this.requestAuthorization(error);
  }

  /** One authorization for this refusal: the machine's `authorizing` state runs it. */
  protected requestAuthorization(error: AuthorizationRequiredError): void {
    this.authorization.remember(error);
    this.tell({ type: 'AUTHORIZATION_REQUIRED', error: error.message });
  }

  /** Sends a request again (with a new id) while serving; otherwise it waits for the next release. */
  private resendOrPark(request: PendingRequest): void {
    if (this.gate.phase !== 'open') return this.waitOrFail(request);
    this.pending.renumber(request);
    this.dispatch(request, false);
  }

  /** Parks a request for the next release (it is off the wire again), unless the gate closed for good. */
  protected waitOrFail(request: PendingRequest): void {
    request.sent = false;
    if (this.gate.phase === 'closed') this.pending.fail(request, this.closedError());
    else this.gate.park(request);
  }

  /** A sent request timed out: `probeAfterTimeouts` of them in a row, with nothing answered, put the connection in doubt. */
  protected onTimedOut(request: PendingRequest): void {
    if (!request.sent || this.config.probeAfterTimeouts === 0) return;
    if (++this.unanswered < this.config.probeAfterTimeouts) return;
    this.unanswered = 0;
    const generation = this.session()?.sessionGeneration;
    const evidence = `${this.config.probeAfterTimeouts} requests in a row timed out with nothing answered`;
    if (generation !== undefined) this.tell({ type: 'SESSION_IN_DOUBT', generation, evidence });
  }

  protected tell(event: ConnectionEvent): void {
    (this.system?.get(this.name) as ConnectionRef | undefined)?.send(event);
  }

  /**
   * Modern era: a -32022 on an ordinary request means the server changed the versions it speaks
   * (an upgrade): the request was not processed, so it waits while the machine discovers again.
   */
  protected onVersionRefused(id: RequestId | null, data: unknown): boolean {
    const request = id === null ? undefined : this.pending.get(id);
    if (!request || this.pastGate.has(request)) return false;
    // A server that still lists our version refuses for another reason: discovering again would loop.
    const supported = (data as { supported?: unknown } | undefined)?.supported;
    if (Array.isArray(supported) && supported.includes(this.envelope?.protocolVersion)) return false;
    const generation = this.session()?.sessionGeneration;
    if (generation === undefined) return false;
    this.waitOrFail(request);
    this.tell({ type: 'SESSION_EXPIRED', generation, evidence: 'protocol version no longer supported (-32022)' });
    return true;
  }

  // ---- the machine's actions on requests

  holdRequests(): void {
    if (!this.closing) this.gate.phase = 'holding';
  }

  /** Parked requests first (never processed, or safe to repeat), then held ones, each with a new id. */
  releaseRequests(): void {
    this.gate.phase = 'open';
    for (const request of this.gate.drain()) {
      if (!this.pending.isPending(request)) continue;
      this.pending.renumber(request);
      this.dispatch(request, false);
    }
    // A roots change made while the same session was in doubt is announced now.
    if (this.savedSessionState?.takeRootsNotice()) void this.notify('notifications/roots/list_changed').catch(ignore);
  }

  rejectWaitingRequests(reason: string): void {
    this.gate.phase = 'closed';
    this.closedReason = this.redact(reason);
    const error = this.closedError();
    for (const request of this.gate.drainAll()) this.pending.fail(request, error);
  }

  /** An authorization failed: the requests refused for want of it fail with its error. */
  failParkedRequests(): void {
    const error =
      this.lastFailure ?? new AuthorizationError(this.lastError() ?? 'authorization failed', { server: this.name });
    for (const request of this.gate.drainParked()) this.pending.fail(request, error);
  }

  settleDoubtfulRequests(lost: boolean): void {
    for (const { request, error } of this.gate.settleDoubtful(lost)) this.pending.fail(request, error);
  }

  protected closedError(): ConnectionClosedError {
    return new ConnectionClosedError(this.closedReason, { server: this.name });
  }
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function ignore(): void {}
