/**
 * Multi round-trip requests with the OpenTelemetry SDK registered: the whole call is one CLIENT
 * span, each round a span event naming the kinds of input asked for (never their content), and
 * every round's request carries the same trace context.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from '../../src/index.js';
import { startMrtrFixture } from '../../servers/mrtr-fixture.js';
import { registerSdk, spansNamed, type RegisteredSdk } from './sdk.js';

let sdk: RegisteredSdk;
beforeAll(() => {
  sdk = registerSdk();
});
afterAll(async () => {
  await sdk.shutdown();
});

it('one span for the call, one "input required" event per round, one trace on the wire', async () => {
  const fixture = await startMrtrFixture();
  const handle = await connect(
    { url: fixture.url, keepalive: false, protocolVersion: 'modern' },
    {
      name: 'fx',
      handlers: {
        elicitation: () => ({ action: 'accept', content: { secret: 'hunter2' } }),
        sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm' }),
        roots: () => ({ roots: [] }),
      },
    },
  );
  try {
    await handle.callTool('two_rounds', {});
  } finally {
    await handle.close();
    await fixture.close();
  }
  const spans = spansNamed(sdk.spans(), 'tools/call two_rounds');
  expect(spans).toHaveLength(1);
  const span = spans[0]!;
  expect(span.events.map((e) => [e.name, e.attributes])).toEqual([
    ['input required', { 'mcp_supervisor.round': 1, 'mcp_supervisor.input_requests': 'elicitation/create' }],
    [
      'input required',
      { 'mcp_supervisor.round': 2, 'mcp_supervisor.input_requests': 'sampling/createMessage,roots/list' },
    ],
  ]);
  expect(JSON.stringify([span.attributes, span.events])).not.toContain('hunter2');
  const traceparents = fixture.requests
    .filter((r) => r.method === 'tools/call')
    .map((r) => String(r.params._meta?.traceparent));
  expect(traceparents).toHaveLength(3);
  for (const traceparent of traceparents) expect(traceparent).toContain(span.spanContext().traceId);
});
