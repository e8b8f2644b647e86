// The bench must not rot: a run with tiny counts, its report's shape, and no call lost across an expiry.
import { describe, expect, it } from 'vitest';
import { formatScale, formatTable, QUICK, runBench } from '../bench/run.js';

describe('bench smoke', () => {
  it('runs every transport with tiny counts and loses no call across a session expiry', async () => {
    const report = await runBench({ counts: QUICK });
    expect(Object.keys(report.transports).sort()).toEqual(['json', 'legacy', 'sse', 'stdio']);
    for (const results of Object.values(report.transports)) {
      expect(results.ours!.seqOps).toBeGreaterThan(0);
      expect(results.ours!.concOps).toBeGreaterThan(0);
      expect(results.sdk!.seqOps).toBeGreaterThan(0);
      expect(results.ours!.retainedBytesPerCall).toEqual(expect.any(Number));
      expect(results.ours!.concCpuUs).toBeGreaterThan(0);
      expect(results.ours!.concSamples, 'one 64-wide sample per slice of every round').toHaveLength(
        QUICK.rounds * QUICK.slices,
      );
    }
    expect(report.transports.json!.raw!.retainedBytesPerCall, 'the floor of the retained measurement').toEqual(
      expect.any(Number),
    );
    expect(report.transports.json!.ours!.expiry!.lost).toBe(0);
    expect(report.transports.sse!.ours!.expiry!.lost).toBe(0);
    expect(report.transports.json!.raw!.seqOps).toBeGreaterThan(0);
    for (const kind of ['json', 'sse', 'legacy'] as const) {
      expect(report.transports[kind]!.ours!.idleHeapBytes, `${kind}: idle heap measured`).toEqual(expect.any(Number));
      expect(
        report.transports[kind]!.ours!.sharedIdleHeapBytes,
        `${kind}: idle heap in one supervisor measured`,
      ).toEqual(expect.any(Number));
    }
    expect(formatTable(report)).toContain('| json | ours |');
    // Many servers in one supervisor, one of their processes killed and restarted.
    const scale = report.scale!;
    expect(scale.servers).toBe(QUICK.scaleServers);
    expect(scale.heapPerServerBytes).toEqual(expect.any(Number));
    expect(scale.kill.killed).toBe(QUICK.scaleServers / QUICK.scaleProcesses);
    expect(scale.kill.othersLeftReady, 'only the killed process’s servers leave ready').toBe(0);
    expect(scale.kill.allLeftReadyMs, 'all of them leave ready').toEqual(expect.any(Number));
    expect(scale.kill.allBackMs, 'and all come back').toEqual(expect.any(Number));
    expect(formatScale(scale)).toContain(`| ${QUICK.scaleServers} | ${QUICK.scaleProcesses} |`);
  }, 240_000); // tiny counts, but a dozen servers, processes and clients to start: minutes on a busy machine
});
