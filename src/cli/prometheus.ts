/**
 * `serve --metrics`: the OpenTelemetry metrics the runtime and the gateway export (calls,
 * latencies, held and retried requests, upstream states, host sessions), in Prometheus text at
 * `GET /metrics` of the gateway's own port. The OpenTelemetry SDK and its Prometheus exporter are
 * optional: loaded only with --metrics.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { metrics } from '@opentelemetry/api';
import { UsageError } from './load-config.js';

export interface PrometheusMetrics {
  handler(req: IncomingMessage, res: ServerResponse): void;
  close(): Promise<void>;
}

/** Registers the global meter provider: call it before the gateway is made. */
export async function prometheusMetrics(): Promise<PrometheusMetrics> {
  const [sdk, prometheus] = await Promise.all([
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/exporter-prometheus'),
  ]).catch((cause: unknown) => {
    throw new UsageError(
      `--metrics needs the OpenTelemetry SDK (npm install @opentelemetry/sdk-metrics @opentelemetry/exporter-prometheus): ${(cause as Error).message}`,
    );
  });
  const exporter = new prometheus.PrometheusExporter({ preventServerStart: true });
  const provider = new sdk.MeterProvider({ readers: [exporter] });
  metrics.setGlobalMeterProvider(provider);
  return {
    handler: (req, res) => exporter.getMetricsRequestHandler(req, res),
    close: () => provider.shutdown(),
  };
}
