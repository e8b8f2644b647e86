// The telemetry bench must not rot: tiny counts, its report's shape, spans exported only with the SDK.
import { describe, expect, it } from 'vitest';
import { formatTelemetry, runTelemetryBench, TELEMETRY_QUICK } from '../../bench/telemetry.js';

describe('telemetry bench smoke', () => {
  it('measures both modes and the disabled hooks; every call with the SDK is a span', async () => {
    const report = await runTelemetryBench(TELEMETRY_QUICK);
    for (const mode of ['no SDK', 'SDK, all sampled'] as const) {
      expect(report.modes[mode].callsPerSecond).toBeGreaterThan(0);
      expect(report.modes[mode].cpuUsPerCall).toBeGreaterThan(0);
      expect(report.modes[mode].samples).toHaveLength(TELEMETRY_QUICK.rounds);
    }
    expect(report.spansExported).toBe(TELEMETRY_QUICK.rounds * TELEMETRY_QUICK.callsPerRound);
    expect(report.disabledHookNs).toBeGreaterThan(0);
    expect(formatTelemetry(report)).toMatch(/SDK, all sampled/);
  });
});
