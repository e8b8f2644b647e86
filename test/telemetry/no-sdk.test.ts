/**
 * Issue #19 item 1: without an SDK registered the API is a no-op and the runtime creates
 * nothing: no span, no instrument, no trace context in `_meta`, no per-server telemetry.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect, type ServerHandle } from '../../src/index.js';
import { currentInstruments } from '../../src/observe/telemetry/metrics.js';
import { currentTracer } from '../../src/observe/telemetry/tracing.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';

let fixture: HttpFixture | undefined;
let handle: ServerHandle | undefined;
afterEach(async () => {
  await handle?.close();
  await fixture?.close();
});

describe('no OpenTelemetry SDK registered', () => {
  it('sends requests as before: no _meta trace context, no tracer, no instruments', async () => {
    fixture = await startHttpFixture();
    handle = await connect({ url: fixture.url }, { name: 'fx' });
    await handle.callTool('echo', { text: 'plain' });

    expect(currentTracer()).toBeUndefined();
    expect(currentInstruments()).toBeUndefined();
    const calls = fixture.requests.filter((r) => r.rpcMethod === 'tools/call');
    expect(calls.map((r) => r.body.params._meta)).toEqual([undefined]);
    const initialize = fixture.requests.find((r) => r.rpcMethod === 'initialize')!;
    expect(initialize.body.params._meta).toBeUndefined();
  });
});
