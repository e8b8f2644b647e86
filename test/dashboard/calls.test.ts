/**
 * The `call` event (observe/calls.ts) and what the dashboard makes of it: one event per request
 * of the user's (never a keepalive probe), its outcome and why; observed only while someone
 * listens (the dashboard: while a page is open), so nobody watching costs the requests nothing;
 * a page is sent the last 50 calls of each batch and told how many it was not sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSupervisor, type CallEvent, type Supervisor } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { startMrtrFixture } from '../../servers/mrtr-fixture.js';
import { readEvents } from './sse-client.js';

let fixture: HttpFixture;
let sup: Supervisor;

beforeAll(async () => {
  fixture = await startHttpFixture();
  sup = createSupervisor({ servers: { docs: { url: fixture.url, keepalive: { intervalMs: 50 } } } });
  await sup.start();
});

afterAll(async () => {
  await sup?.stop();
  await fixture?.close();
});

/** What observes the server's calls now: the observer, and the hook at its pending requests' settle point. */
function observed(): { observer: boolean; hook: boolean } {
  const runtimes = (
    sup as unknown as { runtimes: Map<string, { context: { calls: unknown; pending: { observer: unknown } } }> }
  ).runtimes;
  const context = runtimes.get('docs')!.context;
  return { observer: context.calls !== undefined, hook: context.pending.observer !== undefined };
}

const pings = () => fixture.requests.filter((request) => request.rpcMethod === 'ping').length;

describe('the call event', () => {
  it('tells each call of the user: ok or why not, sends; probes are not calls; nothing once nobody listens', async () => {
    expect(observed()).toEqual({ observer: false, hook: false });
    const calls: CallEvent[] = [];
    const off = sup.on('call', (call) => calls.push(call));
    expect(observed()).toEqual({ observer: true, hook: true });

    const before = Date.now();
    await sup.server('docs').callTool('echo', { text: 'hi' });
    await expect(sup.server('docs').callTool('no-such-tool', {})).rejects.toThrow(/Unknown tool/);
    const aborted = AbortSignal.abort(new Error('the user changed their mind'));
    await expect(sup.server('docs').callTool('echo', { text: 'never' }, { signal: aborted })).rejects.toThrow();
    // Keepalive probes go on meanwhile: none of them is a call.
    const probes = pings();
    await expect.poll(pings).toBeGreaterThan(probes + 2);

    expect(calls).toHaveLength(3);
    expect(calls[0]).toMatchObject({ server: 'docs', method: 'tools/call', tool: 'echo', outcome: 'ok', sends: 1 });
    expect(calls[0]!.params).toMatchObject({ name: 'echo', arguments: { text: 'hi' } });
    expect(calls[0]!.result).toMatchObject({ content: [{ type: 'text', text: 'hi' }] });
    expect(calls[0]!.at).toBeGreaterThanOrEqual(before - 1);
    expect(calls[0]!.durationMs).toBeGreaterThan(0);
    expect(calls[1]).toMatchObject({ tool: 'no-such-tool', outcome: 'error', sends: 1 });
    expect(calls[1]!.error).toMatch(/Unknown tool: no-such-tool/);
    // Refused before it was sent: an error, never on the wire.
    expect(calls[2]).toMatchObject({ tool: 'echo', outcome: 'error', sends: 0 });

    off();
    expect(observed()).toEqual({ observer: false, hook: false });
    await sup.server('docs').callTool('echo', { text: 'unwatched' });
    expect(calls).toHaveLength(3);
  });

  it('tells a call that needed input rounds once, with its final result', async () => {
    const mrtr = await startMrtrFixture();
    const modern = createSupervisor({
      servers: { mrtr: { url: mrtr.url, keepalive: false, protocolVersion: 'modern' } },
      handlers: { elicitation: () => ({ action: 'accept', content: { ok: true } }) },
    });
    const calls: CallEvent[] = [];
    modern.on('call', (call) => calls.push(call));
    try {
      await modern.start();
      await modern.server('mrtr').callTool('confirm', { flow: 'x' });
      await expect.poll(() => calls.length).toBe(1);
      expect(calls[0]).toMatchObject({ tool: 'confirm', outcome: 'ok' });
      expect(JSON.stringify(calls[0]!.result)).not.toContain('input_required');
      expect(mrtr.requests.filter((request) => request.method === 'tools/call')).toHaveLength(2);
    } finally {
      await modern.stop();
      await mrtr.close();
    }
  });
});

describe("the dashboard's activity log", () => {
  it('observes calls only while a page is open', async () => {
    const dashboard = await sup.dashboard();
    try {
      // Listening, nobody looking: the requests are not observed.
      expect(observed()).toEqual({ observer: false, hook: false });
      const page = await readEvents(`${dashboard.url}events`);
      expect(observed()).toEqual({ observer: true, hook: true });
      page.close();
      await expect.poll(observed).toEqual({ observer: false, hook: false });
    } finally {
      await dashboard.close();
    }
  });

  it('sends a page the last 50 calls of a batch and how many it was not sent; payloads once opted in', async () => {
    const dashboard = await sup.dashboard({ payloads: true });
    const page = await readEvents(`${dashboard.url}events`);
    try {
      await expect.poll(() => page.frames.some((frame) => frame.event === 'snapshot')).toBe(true);
      // 120 calls settle in the same tick (refused at once: their signal is already aborted): one batch.
      const aborted = AbortSignal.abort();
      const refused = Array.from({ length: 120 }, (_, i) =>
        sup.server('docs').callTool('echo', { text: `call-${i}` }, { signal: aborted }),
      );
      await Promise.allSettled(refused);
      const batches = () =>
        page.frames
          .filter((frame) => frame.event === 'calls')
          .map((frame) => frame.data as { calls: { args?: string; result?: string }[]; dropped: number });
      await expect.poll(() => batches().length).toBe(1);
      const [batch] = batches();
      expect(batch!.calls).toHaveLength(50);
      expect(batch!.dropped).toBe(70);
      // The newest are the ones listed, oldest first, with their arguments (opted in).
      expect(batch!.calls.map((call) => call.args)).toEqual(
        Array.from({ length: 50 }, (_, i) => `{"text":"call-${70 + i}"}`),
      );
      await sup.server('docs').callTool('echo', { text: 'shown' });
      await expect.poll(() => batches().length).toBe(2);
      expect(batches()[1]).toMatchObject({ calls: [{ args: '{"text":"shown"}', outcome: 'ok' }], dropped: 0 });
      expect(batches()[1]!.calls[0]!.result).toContain('shown');
    } finally {
      page.close();
      await dashboard.close();
    }
  });
});
