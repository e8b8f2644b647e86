/**
 * Issue #19 item 1 and 3: no session id, token or header value in any exported span, event,
 * status or metric attribute, with secret-bearing headers and URL, a server that echoes them
 * in its errors, and a failed re-initialize in between.
 */
import type { Attributes } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSupervisor, type Supervisor } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { nextTransition } from '../integration/helpers.js';
import { registerSdk, type RegisteredSdk } from './sdk.js';

const TOKEN = 'tok-AAAA1111-bearer';
const HEADERS = {
  Authorization: `Bearer ${TOKEN}`,
  'x-secret': 'hunter2-BBBB2222',
  'x-api-key': 'key-CCCC3333',
  'x-tenant': 'acme-tenant-EEEE5555',
};
const QUERY_KEY = 'qk-DDDD4444';

let sdk: RegisteredSdk;
let fixture: HttpFixture | undefined;
let sup: Supervisor | undefined;
beforeAll(() => {
  sdk = registerSdk();
});
afterAll(async () => {
  await sdk.shutdown();
});
afterEach(async () => {
  await sup?.stop();
  await fixture?.close();
});

/** Every string an exporter would send on: names, attribute values, event names and attributes, status messages. */
function exportedText(attributes: Attributes[], strings: string[]): string {
  const values = attributes.flatMap((a) => Object.entries(a).map(([key, value]) => `${key}=${String(value)}`));
  return [...strings, ...values].join('\n');
}

describe('telemetry carries no secret', () => {
  it('with secret headers, a secret in the URL, a server that echoes them, an expiry and a failed re-initialize', async () => {
    fixture = await startHttpFixture();
    sup = createSupervisor({
      servers: { docs: { url: `${fixture.url}?api_key=${QUERY_KEY}`, headers: HEADERS, keepalive: false } },
    });
    await sup.start();
    const docs = sup.server('docs');
    await docs.callTool('echo', { text: 'x' });

    fixture.faults.echoRequestOnce = true;
    await expect(docs.callTool('echo', { text: 'x' })).rejects.toThrow(/HTTP 500/);
    const down = nextTransition(sup, (e) => e.to === 'reconnecting');
    fixture.faults.echoRequestOnce = 'initialize';
    fixture.expireAllSessions();
    const healed = docs.callTool('echo', { text: 'y' });
    await down;
    await healed;
    await sup.stop();
    sup = undefined;

    const spans = sdk.spans();
    const metrics = await sdk.metrics();
    const spanStrings = spans.flatMap((s) => [s.name, s.status.message ?? '', ...s.events.map((e) => e.name)]);
    const spanAttributes = spans.flatMap((s) => [s.attributes, ...s.events.map((e) => e.attributes ?? {})]);
    const metricAttributes = [...metrics.values()].flatMap((m) => m.dataPoints.map((p) => p.attributes));
    const text = exportedText([...spanAttributes, ...metricAttributes], spanStrings);

    // The scan saw what matters: the failed call, the echoing re-initialize, the recover episode.
    expect(spans.some((s) => s.status.message?.includes('[redacted]'))).toBe(true);
    expect(spans.some((s) => s.name === 'mcp_supervisor.recover')).toBe(true);
    expect(metricAttributes.length).toBeGreaterThan(10);
    const sessions = new Set(
      fixture.requests.map((r) => r.headers['mcp-session-id']).filter((id) => typeof id === 'string'),
    );
    const known = [TOKEN, HEADERS['x-secret'], HEADERS['x-api-key'], HEADERS['x-tenant'], QUERY_KEY, ...sessions];
    expect(known.length).toBeGreaterThanOrEqual(7); // two sessions at least
    for (const secret of known) expect(text, `telemetry leaks ${secret.slice(0, 6)}…`).not.toContain(secret);
    expect(text).not.toMatch(/mcp\.session\.id/);
  });
});
