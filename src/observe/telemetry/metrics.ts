/**
 * The metrics, through `@opentelemetry/api` only. The API has no proxy for meters (a meter taken
 * before the application registers its SDK stays a no-op forever), so the instruments are built
 * again whenever the global meter provider changes; while it is the API's no-op provider there
 * are none, and callers skip measuring altogether (no clock read, no attribute object).
 *
 * The conventions' two histograms (`mcp.client.operation.duration`, `mcp.client.session.duration`)
 * and the runtime's own, all listed in docs/telemetry.md.
 */
import {
  createNoopMeter,
  metrics,
  ValueType,
  type Attributes,
  type Counter,
  type Histogram,
  type MeterProvider,
  type ObservableResult,
} from '@opentelemetry/api';
import { CONNECTION_STATES } from '../../../machines/connection.machine.js';
import { VERSION } from '../../core/version.js';
import { ATTR } from './attributes.js';

export const INSTRUMENTATION_NAME = 'mcp-supervisor';
export { VERSION as INSTRUMENTATION_VERSION };

/** The conventions' advisory buckets for both MCP duration histograms (seconds). */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
const RTT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10];

/** What the state gauge reads from each live connection. */
export interface ObservedConnection {
  /** Who the server is (not its protocol version: a series must not change name mid-life). */
  readonly identity: Attributes;
  currentState(): string;
}

/**
 * Connections observed by the state gauge, by identity. The SDK keeps exporting the last value of
 * a series no longer observed, so a closed connection is not dropped (it would read `ready`
 * forever): it stays as a small record in state `closed`, until a connection with the same
 * identity (a server of the same name and address, started again) takes its place.
 */
const observed = new Map<string, ObservedConnection>();

const identityKey = (identity: Attributes) => JSON.stringify(identity);

export function observeConnection(connection: ObservedConnection, previous?: Attributes): void {
  if (previous !== undefined && observed.get(identityKey(previous)) === connection)
    observed.delete(identityKey(previous));
  observed.set(identityKey(connection.identity), connection);
}

export function forgetConnection(connection: ObservedConnection): void {
  const key = identityKey(connection.identity);
  if (observed.get(key) === connection)
    observed.set(key, { identity: connection.identity, currentState: () => 'closed' });
}

/** The gauge has one series per server and state: every top-level state of the connection machine. */
function reportStates(result: ObservableResult): void {
  for (const connection of observed.values()) {
    const current = connection.currentState();
    for (const state of CONNECTION_STATES) {
      result.observe(state === current ? 1 : 0, { ...connection.identity, [ATTR.state]: state });
    }
  }
}

export class Instruments {
  readonly operationDuration: Histogram;
  readonly sessionDuration: Histogram;
  readonly transitions: Counter;
  readonly restarts: Counter;
  readonly reinitializations: Counter;
  readonly replays: Counter;
  readonly held: Counter;
  readonly throttled: Counter;
  readonly retried: Counter;
  readonly keepaliveRtt: Histogram;
  readonly keepaliveMisses: Counter;
  readonly stdioRestarts: Counter;

  constructor(provider: MeterProvider) {
    const meter = provider.getMeter(INSTRUMENTATION_NAME, VERSION);
    this.operationDuration = meter.createHistogram('mcp.client.operation.duration', {
      description:
        'The duration of the MCP request or notification as observed on the sender from the time it was sent until the response or ack is received.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    this.sessionDuration = meter.createHistogram('mcp.client.session.duration', {
      description: 'The duration of the MCP session as observed on the MCP client.',
      unit: 's',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    });
    meter
      .createObservableGauge('mcp_supervisor.connection.state', {
        description: "1 for the connection's current state, 0 for the others (one series per server and state).",
        unit: '1',
        valueType: ValueType.INT,
      })
      .addCallback(reportStates);
    this.transitions = counter(meter, 'mcp_supervisor.connection.transitions', '{transition}', 'State changes.');
    this.restarts = counter(
      meter,
      'mcp_supervisor.connection.restarts',
      '{restart}',
      'Connections rebuilt by the restart policy (a new transport, a new session).',
    );
    this.reinitializations = counter(
      meter,
      'mcp_supervisor.session.reinitializations',
      '{reinitialization}',
      'Sessions re-initialized after the server expired the previous one.',
    );
    this.replays = counter(
      meter,
      'mcp_supervisor.requests.replayed',
      '{request}',
      'Requests sent again after the session or connection was lost under them.',
    );
    this.held = counter(
      meter,
      'mcp_supervisor.requests.held',
      '{request}',
      'Requests that waited for the connection to be ready again instead of failing.',
    );
    this.throttled = counter(
      meter,
      'mcp_supervisor.requests.throttled',
      '{request}',
      'Requests that waited while the server was ready: for a 429/503 Retry-After window, maxInFlight or the rate limit.',
    );
    this.retried = counter(
      meter,
      'mcp_supervisor.requests.retried',
      '{request}',
      'Requests sent again after the server answered 429 or 503 (it did not process them).',
    );
    this.keepaliveRtt = meter.createHistogram('mcp_supervisor.keepalive.rtt', {
      description: 'Round trip of the keepalive probe.',
      unit: 's',
      advice: { explicitBucketBoundaries: RTT_BUCKETS },
    });
    this.keepaliveMisses = counter(
      meter,
      'mcp_supervisor.keepalive.misses',
      '{probe}',
      'Keepalive probes that got no answer.',
    );
    this.stdioRestarts = counter(
      meter,
      'mcp_supervisor.stdio.process.restarts',
      '{process}',
      'stdio server processes started again after a session had been established.',
    );
  }
}

function counter(meter: ReturnType<MeterProvider['getMeter']>, name: string, unit: string, description: string) {
  return meter.createCounter(name, { description, unit, valueType: ValueType.INT });
}

const NOOP_METER = createNoopMeter();
let instrumentsFrom: MeterProvider | undefined;
let instruments: Instruments | undefined;

/** The instruments of the registered meter provider; undefined while none is registered. Cheap: two property reads. */
export function currentInstruments(): Instruments | undefined {
  const provider = metrics.getMeterProvider();
  if (provider === instrumentsFrom) return instruments;
  instrumentsFrom = provider;
  instruments = provider.getMeter(INSTRUMENTATION_NAME, VERSION) === NOOP_METER ? undefined : new Instruments(provider);
  return instruments;
}
