/**
 * What OpenTelemetry costs per call (issue #19 item 4): `tools/call` over Streamable HTTP (JSON
 * answers) against the bench server in a child process, 64 in flight, in alternating rounds:
 *
 * - `no SDK`: nothing registered, the API is a no-op: the runtime's hooks find no tracer and no
 *   meter and create nothing (this is every user who does not opt in);
 * - `SDK, all sampled`: the real SDK registered as an application would (AlwaysOn sampler, batch
 *   span processor, a meter provider with a reader), every call a span, a histogram record,
 *   the trace context injected into `_meta`.
 *
 * Also the disabled hooks alone, timed in a loop: what the no-SDK path adds to each call.
 *
 *   npm run bench (runs it after the main bench)   or   node .bench-build/bench/telemetry.js [--quick] [--json file]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  AlwaysOnSampler,
  BatchSpanProcessor,
  TracerProvider,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import { connect, type ServerHandle } from '../src/index.js';
import { startOperation, type TelemetrySource } from '../src/observe/telemetry/server-telemetry.js';

export interface TelemetryCounts {
  rounds: number;
  callsPerRound: number;
  concurrency: number;
  hookLoops: number;
}
export const TELEMETRY_FULL: TelemetryCounts = {
  rounds: 6,
  callsPerRound: 4000,
  concurrency: 64,
  hookLoops: 2_000_000,
};
export const TELEMETRY_QUICK: TelemetryCounts = { rounds: 2, callsPerRound: 200, concurrency: 8, hookLoops: 10_000 };

type Mode = 'no SDK' | 'SDK, all sampled';
const MODES: Mode[] = ['no SDK', 'SDK, all sampled'];

export interface ModeResult {
  /** Calls/s, median round. */
  callsPerSecond: number;
  /** CPU of this process (user + system) per call, µs, median round. */
  cpuUsPerCall: number;
  samples: { callsPerSecond: number; cpuUsPerCall: number }[];
}
export interface TelemetryReport {
  counts: TelemetryCounts;
  modes: Record<Mode, ModeResult>;
  /** The disabled hooks of one request (no SDK), timed alone: ns per call. */
  disabledHookNs: number;
  spansExported: number;
}

/** Drops what it is given (counting it): the cost measured is the SDK's, not an exporter's network. */
class DiscardingExporter implements SpanExporter {
  exported = 0;
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.exported += spans.length;
    done({ code: ExportResultCode.SUCCESS });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

class IdleReader extends MetricReader {
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

interface Sdk {
  exporter: DiscardingExporter;
  stop(): Promise<void>;
}

function registerSdk(): Sdk {
  const exporter = new DiscardingExporter();
  const tracerProvider = new TracerProvider({
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  const meterProvider = new MeterProvider({ readers: [new IdleReader()] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    exporter,
    async stop() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
    },
  };
}

const COMPILED = import.meta.url.endsWith('.js');
const SERVER = fileURLToPath(new URL(`./server.${COMPILED ? 'js' : 'ts'}`, import.meta.url));

async function startServer(): Promise<{ url: string; child: ChildProcess }> {
  const args = COMPILED ? [SERVER, '--mode', 'json'] : ['--import', 'tsx', SERVER, '--mode', 'json'];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve((JSON.parse(chunk.toString()) as { port: number }).port));
    child.once('exit', () => reject(new Error('bench server exited')));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

async function round(handle: ServerHandle, calls: number, concurrency: number) {
  let next = 0;
  const worker = async () => {
    while (next++ < calls) await handle.callTool('echo', {});
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { callsPerSecond: Math.round(calls / seconds), cpuUsPerCall: (used.user + used.system) / calls };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The disabled path of one request's hooks, alone: what every call pays when no SDK is registered. */
function disabledHookNs(loops: number): number {
  // Only `telemetry` is read while no SDK is registered (the loop checks nothing else is).
  const source = { context: { telemetry: undefined } } as unknown as TelemetrySource;
  const params = { name: 'echo', arguments: {} };
  let created = 0;
  const started = process.hrtime.bigint();
  for (let i = 0; i < loops; i++) if (startOperation(source, 'tools/call', params)) created++;
  const ns = Number(process.hrtime.bigint() - started) / loops;
  if (created !== 0) throw new Error('an operation was created with no SDK registered');
  return Math.round(ns * 10) / 10;
}

export async function runTelemetryBench(counts: TelemetryCounts): Promise<TelemetryReport> {
  const server = await startServer();
  const handle = await connect({ url: server.url, type: 'http', keepalive: false }, { name: 'bench' });
  const samples: Record<Mode, ModeResult['samples']> = { 'no SDK': [], 'SDK, all sampled': [] };
  let spansExported = 0;
  const hookNs = disabledHookNs(counts.hookLoops);
  try {
    await round(handle, counts.callsPerRound / 4, counts.concurrency); // warm-up
    for (let r = 0; r < counts.rounds; r++) {
      // Alternate which goes first: a drifting machine load favours neither.
      for (const mode of r % 2 === 0 ? MODES : [...MODES].reverse()) {
        const sdk = mode === 'no SDK' ? undefined : registerSdk();
        samples[mode].push(await round(handle, counts.callsPerRound, counts.concurrency));
        if (sdk) {
          await sdk.stop();
          spansExported += sdk.exporter.exported;
        }
      }
    }
  } finally {
    await handle.close();
    server.child.kill();
  }
  const result = (mode: Mode): ModeResult => ({
    callsPerSecond: median(samples[mode].map((s) => s.callsPerSecond)),
    cpuUsPerCall: Math.round(median(samples[mode].map((s) => s.cpuUsPerCall)) * 10) / 10,
    samples: samples[mode],
  });
  return {
    counts,
    modes: { 'no SDK': result('no SDK'), 'SDK, all sampled': result('SDK, all sampled') },
    disabledHookNs: hookNs,
    spansExported,
  };
}

export function formatTelemetry(report: TelemetryReport): string {
  const off = report.modes['no SDK'];
  const on = report.modes['SDK, all sampled'];
  const pct = (a: number, b: number) => `${b >= a ? '+' : ''}${(((b - a) / a) * 100).toFixed(1)}%`;
  return [
    `OpenTelemetry: tools/call over Streamable HTTP (JSON), ${report.counts.concurrency} in flight, median of ${report.counts.rounds} alternating rounds`,
    `  mode               calls/s   CPU µs/call`,
    `  no SDK          ${String(off.callsPerSecond).padStart(10)}   ${off.cpuUsPerCall.toFixed(1).padStart(11)}`,
    `  SDK, all sampled${String(on.callsPerSecond).padStart(10)}   ${on.cpuUsPerCall.toFixed(1).padStart(11)}   (${pct(off.callsPerSecond, on.callsPerSecond)} calls/s, ${pct(off.cpuUsPerCall, on.cpuUsPerCall)} CPU)`,
    `  disabled hooks alone: ${report.disabledHookNs} ns per call (${((report.disabledHookNs / 1000 / off.cpuUsPerCall) * 100).toFixed(3)}% of a call's CPU)`,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  const report = await runTelemetryBench(argv.includes('--quick') ? TELEMETRY_QUICK : TELEMETRY_FULL);
  process.stdout.write(`\n${formatTelemetry(report)}\n`);
  const out = argv.includes('--json') ? argv[argv.indexOf('--json') + 1] : undefined;
  if (out) writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  process.exit(0);
}
