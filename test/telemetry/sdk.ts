/**
 * The real OpenTelemetry SDK as an application would register it: a tracer provider sampling
 * everything into an in-memory exporter, AsyncLocalStorage context, the W3C propagators, and a
 * meter provider read on demand.
 */
import { context, metrics, propagation, trace, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  MeterProvider,
  MetricReader,
  type DataPoint,
  type IMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import {
  AlwaysOnSampler,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  TracerProvider,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace';

class OnDemandReader extends MetricReader {
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

export interface RegisteredSdk {
  spans(): ReadableSpan[];
  /** Every metric collected now, by name. */
  metrics(): Promise<Map<string, MetricData>>;
  reset(): void;
  shutdown(): Promise<void>;
}

export function registerSdk(extraReaders: IMetricReader[] = []): RegisteredSdk {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new TracerProvider({
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new SimpleSpanProcessor({ exporter })],
  });
  const reader = new OnDemandReader();
  const meterProvider = new MeterProvider({ readers: [reader, ...extraReaders] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    spans: () => exporter.getFinishedSpans(),
    async metrics() {
      const { resourceMetrics } = await reader.collect();
      const byName = new Map<string, MetricData>();
      for (const scope of resourceMetrics.scopeMetrics)
        for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
      return byName;
    },
    reset: () => exporter.reset(),
    async shutdown() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
      trace.disable();
      metrics.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** The data points of a metric whose attributes include `match`. */
export function pointsOf(metric: MetricData | undefined, match: Attributes = {}): DataPoint<unknown>[] {
  if (!metric) return [];
  return (metric.dataPoints as DataPoint<unknown>[]).filter((point) =>
    Object.entries(match).every(([key, value]) => point.attributes[key] === value),
  );
}

/** The sum of a counter's points matching `match`. */
export function total(metric: MetricData | undefined, match: Attributes = {}): number {
  return pointsOf(metric, match).reduce((sum, point) => sum + (point.value as number), 0);
}

/** The spans named `name`. */
export function spansNamed(spans: ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((span) => span.name === name);
}
