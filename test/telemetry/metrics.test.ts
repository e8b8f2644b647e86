/**
 * Issue #19 item 2, with the real OpenTelemetry SDK: the conventions' histograms and the
 * runtime's own metrics (state, transitions, restarts, re-initializations, replays, held
 * requests, keepalive round trips and misses, stdio process restarts), read by a metric reader
 * and scraped from the standard Prometheus exporter's own endpoint.
 */
import { CONNECTION_STATES } from '../../machines/connection.machine.js';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connect, type ServerHandle } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { nextTransition, quickRestart, refusingUrl, rpcPosts } from '../integration/helpers.js';
import { FIXTURE, newTag } from '../transports/stdio/helpers.js';
import { pointsOf, registerSdk, total, type RegisteredSdk } from './sdk.js';

let sdk: RegisteredSdk;
let prometheus: PrometheusExporter;
let scrapeUrl: string;
const cleanups: Array<() => Promise<void>> = [];
const fast = { intervalMs: 40, timeoutMs: 200, maxMissed: 2 };

beforeAll(async () => {
  const port = Number(new URL(await refusingUrl()).port);
  await new Promise<void>((resolve, reject) => {
    prometheus = new PrometheusExporter({ host: '127.0.0.1', port }, (error) => (error ? reject(error) : resolve()));
  });
  scrapeUrl = `http://127.0.0.1:${port}/metrics`;
  sdk = registerSdk([prometheus]);
});
afterAll(async () => {
  await sdk.shutdown(); // shuts the exporter's server down too
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function open(config: Parameters<typeof connect>[0]): Promise<ServerHandle> {
  const handle = await connect(config, { name: 'fx' });
  cleanups.push(() => handle.close());
  return handle;
}

async function fixture(): Promise<HttpFixture> {
  const started = await startHttpFixture();
  cleanups.push(() => started.close());
  return started;
}

/** Resolves once the fixture has seen `count` requests of `rpcMethod` (the keepalive runs on its own clock). */
function seen(f: HttpFixture, rpcMethod: string, count: number): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (rpcPosts(f, rpcMethod).length >= count ? resolve() : setImmediate(check));
    check();
  });
}

describe('metrics', () => {
  it('a Prometheus scrape finds the MCP histograms and the runtime metrics, per server and state', async () => {
    const server = await fixture();
    const handle = await open({ url: server.url, keepalive: fast });
    await handle.callTool('echo', { text: 'a' });
    await seen(server, 'ping', 2);
    // A request issued while the session is being re-initialized is held, then released.
    let held: Promise<unknown> | undefined;
    const reinitializing = nextTransition(handle, (t) => {
      if (t.to === 'reinitializing') held = handle.callTool('echo', { text: 'held' });
      return t.to === 'reinitializing';
    });
    server.expireAllSessions();
    await handle.callTool('echo', { text: 'replayed' });
    await reinitializing;
    await held;

    const response = await fetch(scrapeUrl);
    expect(response.status).toBe(200);
    const body = await response.text();
    const port = new URL(server.url).port;
    for (const name of [
      'mcp_client_operation_duration',
      'mcp_client_session_duration',
      'mcp_supervisor_connection_transitions',
      'mcp_supervisor_session_reinitializations',
      'mcp_supervisor_requests_replayed',
      'mcp_supervisor_requests_held',
      'mcp_supervisor_keepalive_rtt',
    ]) {
      expect(body, name).toMatch(new RegExp(`^${name}\\w*\\{[^}]*server_port="${port}"`, 'm'));
    }
    expect(body).toMatch(
      /^mcp_client_operation_duration\w*_bucket\{[^}]*mcp_method_name="tools\/call"[^}]*le="0\.01"/m,
    );
    const state = (name: string, value: number) =>
      new RegExp(
        `^mcp_supervisor_connection_state\\{(?=[^}]*mcp_supervisor_state="${name}")(?=[^}]*server_port="${port}")[^}]*\\} ${value}$`,
        'm',
      );
    expect(body).toMatch(state('ready', 1));
    expect(body).toMatch(state('failed', 0));
    expect(body).not.toMatch(/mcp_supervisor_connection_state\{[^}]*mcp_protocol_version/);
  });

  it('keepalive misses and a restart are counted; the session ends with error.type connection_lost', async () => {
    const server = await fixture();
    const handle = await open({ url: server.url, keepalive: fast, restart: quickRestart(5) });
    await seen(server, 'ping', 1);
    server.faults.silentPings = true;
    await nextTransition(handle, (t) => t.to === 'reconnecting');
    server.faults.silentPings = false;
    await nextTransition(handle, (t) => t.to === 'ready');

    const metrics = await sdk.metrics();
    const here = { 'server.port': Number(new URL(server.url).port) };
    expect(total(metrics.get('mcp_supervisor.keepalive.misses'), here)).toBeGreaterThanOrEqual(2);
    expect(total(metrics.get('mcp_supervisor.connection.restarts'), here)).toBe(1);
    const sessions = pointsOf(metrics.get('mcp.client.session.duration'), here);
    expect(sessions.map((p) => p.attributes['error.type'])).toEqual(['connection_lost']);
    // One series per top-level state of the connection machine (read from the machine).
    expect(pointsOf(metrics.get('mcp_supervisor.connection.state'), here)).toHaveLength(CONNECTION_STATES.length);

    // A closed server reads `closed` (not its last state); its session ends without an error.type.
    await handle.close();
    const after = await sdk.metrics();
    const current = pointsOf(after.get('mcp_supervisor.connection.state'), here).filter((p) => p.value === 1);
    expect(current.map((p) => p.attributes['mcp_supervisor.state'])).toEqual(['closed']);
    expect(pointsOf(after.get('mcp.client.session.duration'), here).map((p) => p.attributes['error.type'])).toEqual([
      'connection_lost',
      undefined,
    ]);
  });

  it('a 429 window and maxInFlight are counted: throttled by reason, retried by method', async () => {
    const server = await fixture();
    const handle = await open({
      url: server.url,
      keepalive: false,
      protocolVersion: 'legacy',
      maxInFlight: 1,
      maxRetryAfterMs: 20, // a short real window
    });
    server.faults.busy = { status: 429, retryAfter: '5' };
    const first = handle.callTool('echo', { text: 'busy' });
    await seen(server, 'tools/call', 1);
    server.faults.busy = undefined;
    const second = handle.callTool('echo', { text: 'queued' });
    await Promise.all([first, second]);

    const metrics = await sdk.metrics();
    const here = { 'server.port': Number(new URL(server.url).port) };
    const throttled = metrics.get('mcp_supervisor.requests.throttled');
    expect(total(throttled, { ...here, 'mcp_supervisor.throttle.reason': 'retry_after' })).toBeGreaterThanOrEqual(1);
    expect(total(metrics.get('mcp_supervisor.requests.retried'), { ...here, 'mcp.method.name': 'tools/call' })).toBe(1);
    expect(handle.status().backpressure).toMatchObject({ held: 1, retried: 1 });
  });

  it('a stdio server that crashes is started again: one stdio process restart', async () => {
    const handle = await open({
      command: process.execPath,
      args: [FIXTURE, '--crash-after', '1', ...newTag()],
      restart: quickRestart(5),
      keepalive: false,
      protocolVersion: 'legacy', // the fixture counts requests: no server/discover probe before the one it crashes on
    });
    await handle.callTool('echo', { text: 'one' });
    const ready = nextTransition(handle, (t) => t.to === 'ready');
    await handle.callTool('echo', { text: 'crash' }).catch(() => undefined);
    await ready;

    const metrics = await sdk.metrics();
    const stdio = { 'network.transport': 'pipe' };
    expect(total(metrics.get('mcp_supervisor.stdio.process.restarts'), stdio)).toBe(1);
    expect(total(metrics.get('mcp_supervisor.connection.restarts'), stdio)).toBe(1);
  });
});
