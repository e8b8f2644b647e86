/**
 * What the machine sends to learn about the server, and how: the keepalive child's probe (an
 * ordinary request, skipped while others are in flight), the `probing` state's session check,
 * and the send past the gate that the era probe, the session check and a restore use (its
 * failure settles the request and is the machine's business: no evidence is read).
 */
import type { ProbeVerdict } from '../../../machines/connection.machine.js';
import type { ProbeOutput } from '../../../machines/keepalive.machine.js';
import { probeTimeoutMs } from '../../protocol/deadlines.js';
import { ConnectionClosedError, McpError } from '../../core/errors.js';
import type { JsonRpcRequest } from '../../protocol/jsonrpc.js';
import { probeVerdict } from '../recovery/evidence.js';
import type { RequestPath } from '../requests/request-path.js';
import type { OriginLiveness } from '../../transports/origin-liveness.js';
import type { ReadOnlyContext } from '../context/server-context.js';
import { KeepaliveProbe } from './keepalive-probe.js';

export class Probes {
  private readonly keepaliveProbe = new KeepaliveProbe();

  constructor(
    private readonly context: ReadOnlyContext,
    private readonly requests: RequestPath,
    /** Its origin's record: a probe sent is marked there, so siblings due meanwhile wait for its answer. */
    private readonly liveness: OriginLiveness,
  ) {}

  /**
   * One keepalive probe; skipped while requests are in flight, and when an answer came since the
   * last probe (they prove liveness themselves).
   */
  async probe(timeoutMs: number): Promise<ProbeOutput> {
    if (this.keepaliveProbe.heardSince(this.context.pending.answered)) return { skipped: true };
    if (this.busy()) return { skipped: true };
    return this.probeNow(timeoutMs);
  }

  /** Requests are in flight: they prove the server alive, or time out (its own evidence). */
  busy(): boolean {
    return this.context.pending.size - this.context.gate.waiting > 0;
  }

  /**
   * One probe now, skipped only in a 429/503 window: also an origin keepalive's probe of one of its
   * servers (src/runtime/keepalive/), sent whatever answer that server had last, so a frozen
   * origin is found within `maxMissed` intervals.
   */
  async probeNow(timeoutMs: number): Promise<ProbeOutput> {
    const { pending, gate, telemetry } = this.context;
    // A 429/503 window: the server answered (it is alive) and asked for nothing to be sent.
    if (gate.limited > 0 || this.requests.limits.until !== undefined) return { skipped: true };
    this.liveness.probeSent();
    const answered = () => pending.answered;
    // The modern era has no `ping`; `server/discover` is the one request every modern server serves.
    const probe = this.context.facts?.envelope
      ? this.keepaliveProbe.run(
          () => this.requests.request('server/discover', undefined, { timeoutMs }),
          undefined,
          answered,
        )
      : this.keepaliveProbe.run(
          (method) => this.requests.request(method, undefined, { timeoutMs }),
          this.context.session()?.capabilities,
          answered,
        );
    return telemetry ? telemetry.onProbe(probe) : probe;
  }

  /** `probing`: one `ping` on the session, past the gate; its answer (or failure) is the verdict. */
  async probeSession(): Promise<ProbeVerdict> {
    const { transport, config, authorization } = this.context;
    if (!transport) return { verdict: 'unreachable', error: 'no transport' };
    const keepalive = config.keepalive;
    const timeoutMs = keepalive === false ? probeTimeoutMs(config) : keepalive.timeoutMs;
    const envelope = this.context.facts?.envelope;
    try {
      // Modern: no `ping`; one `server/discover` (which also refreshes nothing: the session stays).
      if (envelope) await this.sendPastGate('server/discover', envelope.wrap(undefined), timeoutMs);
      else await this.sendPastGate('ping', undefined, timeoutMs, false);
      return { verdict: 'alive' };
    } catch (error) {
      if (error instanceof McpError) return { verdict: 'alive' }; // any answer proves the session alive
      if (authorization.isFixable(error)) authorization.remember(error);
      return probeVerdict(error);
    }
  }

  /** One request straight to the transport, whatever the gate says; its failure settles it (no evidence is read). */
  sendPastGate(
    method: string,
    params: Record<string, unknown> | undefined,
    timeoutMs: number,
    /** The era probe is not cancelled (a legacy server may not know the method); a ping may be. */
    probe = true,
  ): Promise<unknown> {
    const { transport, pending } = this.context;
    if (!transport) return Promise.reject(new ConnectionClosedError('no transport', { server: this.context.name }));
    const { request, promise } = pending.create(method, params, { timeoutMs, uncancellable: probe });
    this.context.pastGate.add(request);
    request.sent = true;
    const message: JsonRpcRequest =
      params === undefined
        ? { jsonrpc: '2.0', id: request.id, method }
        : { jsonrpc: '2.0', id: request.id, method, params };
    transport
      .send(message, { timeoutMs, signal: probe ? request : undefined })
      .catch((error: unknown) => pending.fail(request, error instanceof Error ? error : new Error(String(error))));
    return promise;
  }
}
