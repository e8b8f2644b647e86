/**
 * The keepalive probe is skipped for a server that answered anything since the last probe: an
 * answer proves it alive, so a busy server costs no probes. The probe's own answer is not traffic.
 */
import { describe, expect, it } from 'vitest';
import { KeepaliveProbe } from '../../src/runtime/probes/keepalive-probe.js';

describe('keepalive probe: traffic within the interval', () => {
  it('is heard only when an answer came since the last probe', async () => {
    const probe = new KeepaliveProbe();
    let answered = 0;
    expect(probe.heardSince(answered), 'nothing answered yet').toBe(false);
    answered += 3; // three calls answered during the interval
    expect(probe.heardSince(answered), 'answers since the last probe').toBe(true);
    expect(probe.heardSince(answered), 'none since the skipped probe').toBe(false);
    // A probe that runs: its own answer moves the count, and is not taken for traffic.
    const sent: string[] = [];
    const output = await probe.run(
      async (method) => {
        sent.push(method);
        answered++;
      },
      undefined,
      () => answered,
    );
    expect(sent).toEqual(['ping']);
    expect(output.skipped).toBe(false);
    expect(probe.heardSince(answered), 'the probe’s own answer').toBe(false);
  });
});
