/**
 * What one keepalive probe sends and what it proves. Any answer, a JSON-RPC error included,
 * proves the server alive; a server without `ping` (-32601) is probed with the cheapest list
 * request it advertised from then on. A server that answered anything since the last probe (an
 * interval ago) is not probed: the answer proved it alive, and a busy server costs no probes.
 */
import type { ProbeOutput } from '../../../machines/keepalive.machine.js';
import { McpError } from '../../core/errors.js';

export class KeepaliveProbe {
  private method = 'ping';
  /** The connection's answer count when the last probe ended (or was skipped). */
  private answeredBefore = 0;

  /** Whether an answer came since the last probe; the count is taken as the new mark. */
  heardSince(answered: number): boolean {
    const heard = answered !== this.answeredBefore;
    this.answeredBefore = answered;
    return heard;
  }

  async run(
    send: (method: string) => Promise<unknown>,
    capabilities?: Record<string, unknown>,
    answered?: () => number,
  ): Promise<ProbeOutput> {
    const started = performance.now();
    try {
      await send(this.method);
    } catch (error) {
      // No answer: a miss, counted by the keepalive machine.
      if (!(error instanceof McpError)) throw error;
      if (error.rpcCode === -32601 && this.method === 'ping') this.method = cheapListMethod(capabilities);
    } finally {
      // The probe's own answer is not traffic.
      if (answered) this.answeredBefore = answered();
    }
    return { skipped: false, rttMs: Math.round(performance.now() - started) };
  }
}

function cheapListMethod(capabilities: Record<string, unknown> | undefined): string {
  if (capabilities?.tools) return 'tools/list';
  if (capabilities?.prompts) return 'prompts/list';
  if (capabilities?.resources) return 'resources/list';
  return 'ping';
}
