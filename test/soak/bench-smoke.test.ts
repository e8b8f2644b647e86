// The bench must not rot: a run with tiny counts, its report's shape, and no call lost across an expiry.
import { describe, expect, it } from 'vitest';
import { formatEras } from '../../bench/eras.js';
import { formatScale, formatTable, QUICK, runBench } from '../../bench/run.js';

// The smoke checks the report's shape, not its figures: the idle-heap children read the heap after
// 0.3 s, not after the 10.5 s a real run rests for its idle sockets to close (bench/idle-heap.ts).
process.env.IDLE_HEAP_SETTLE_MS ??= '300';

describe('bench smoke', () => {
  it('runs every transport with tiny counts and loses no call across a session expiry', async () => {
    const report = await runBench({ counts: QUICK });
    expect(Object.keys(report.transports).sort()).toEqual(['json', 'legacy', 'modern', 'sse', 'stateful', 'stdio']);
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
    // The interceptors A/B: callTool with none, the path before them, and one pass-through.
    for (const mode of ['before', 'none', 'one pass-through'] as const)
      expect(report.interceptors![mode].seqOps, `interceptors ${mode}`).toBeGreaterThan(0);
    // The two eras against one dual-era server: every client's calls succeeded (a failed call
    // rejects the run), each era on its own wire.
    const eras = report.eras!;
    for (const era of ['modern', 'stateful'] as const)
      for (const name of ['raw', 'sdk', 'ours'] as const) {
        const row = eras[era][name];
        expect(row.seqOps, `${era} ${name}: calls answered`).toBeGreaterThan(0);
        expect(row.concOps, `${era} ${name}: calls answered at 64 in flight`).toBeGreaterThan(0);
        expect(row.p99Ms).toEqual(expect.any(Number));
        expect(row.idleHeapBytes, `${era} ${name}: idle heap measured`).toEqual(expect.any(Number));
        const wire = eras.wire[`${era}-${name}`];
        expect(wire.posts, `${era} ${name}: its calls reached the server`).toBeGreaterThan(QUICK.seqCalls);
        if (era === 'modern') {
          expect(wire.modern, `${name}: every POST on the modern wire`).toBe(wire.posts);
          expect(wire.withSession, `${name}: no session id on the modern wire`).toBe(0);
          expect(wire.getStreams, `${name}: no GET stream on the modern wire`).toBe(0);
        } else {
          expect(wire.modern, `${name}: no modern POST in the 2025 era`).toBe(0);
          expect(wire.withSession, `${name}: every POST after initialize carries the session`).toBe(wire.posts - 1);
        }
      }
    expect(eras.stateful.ours.retainedBytesPerCall).toEqual(expect.any(Number));
    expect(eras.modern.ours.sharedIdleHeapBytes).toEqual(expect.any(Number));
    expect(eras.wire['stateful-ours'].getStreams, 'ours opens the 2025 era’s GET stream').toBe(1);
    expect(formatEras(eras)).toContain('| 2026-07-28 | ours |');
    // Many servers in one supervisor, one of their processes killed and restarted.
    const scale = report.scale!;
    expect(scale.servers).toBe(QUICK.scaleServers);
    expect(scale.heapPerServerBytes).toEqual(expect.any(Number));
    expect(scale.kill.killed).toBe(QUICK.scaleServers / QUICK.scaleProcesses);
    expect(scale.kill.othersLeftReady, 'only the killed process’s servers leave ready').toBe(0);
    expect(scale.kill.allLeftReadyMs, 'all of them leave ready').toEqual(expect.any(Number));
    expect(scale.kill.allBackMs, 'and all come back').toEqual(expect.any(Number));
    expect(formatScale(scale)).toContain(`| ${QUICK.scaleServers} | ${QUICK.scaleProcesses} |`);
  }, 360_000); // tiny counts, but a dozen servers, processes and clients to start: minutes on a busy machine
});
