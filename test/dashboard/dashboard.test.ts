/**
 * `sup.dashboard()` over HTTP, as a browser would talk to it: the token and the Host check guard
 * every address, the event stream carries rows (nested and children's states), transitions and
 * calls, the actions work, and no secret the test planted (headers, a query key, `${VAR}` values,
 * session ids, a stdio child's stderr) reaches anything the page receives.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSupervisor, fromMcpServersJson, type Supervisor } from '../../src/index.js';
import type { Row } from '../../src/dashboard/rows.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { get, reachable, readEvents, type Frame, type SseReader } from './sse-client.js';

const API_KEY = 'api-EEEE5555-secret';
const QUERY_KEY = 'qk-FFFF6666';
const STDIO_SECRET = 'stdio-GGGG7777-secret';
const STDIO_FIXTURE = pathToFileURL(fileURLToPath(new URL('../../servers/stdio-server.mjs', import.meta.url))).href;

let fixture: HttpFixture;
let sup: Supervisor;
let dashboard: { url: string; close(): Promise<void> };
let stream: SseReader;
/** Everything the page could receive, gathered by the tests for the scan at the end. */
const received: string[] = [];

beforeAll(async () => {
  fixture = await startHttpFixture();
  const servers = fromMcpServersJson(
    {
      mcpServers: {
        docs: {
          url: `${fixture.url}?api_key=\${QUERY_KEY}`,
          headers: { Authorization: 'Bearer ${API_KEY}' },
        },
        files: {
          command: process.execPath,
          // The child prints its secret to stderr: the row shows the line, redacted.
          args: ['-e', "console.error('token=' + process.env.STDIO_SECRET); import(process.env.FIXTURE)"],
          env: { STDIO_SECRET: '${STDIO_SECRET}', FIXTURE: STDIO_FIXTURE },
        },
        spare: { url: fixture.url, disabled: true },
      },
    },
    { env: { API_KEY, QUERY_KEY, STDIO_SECRET } },
  );
  sup = createSupervisor({ servers: { ...servers, docs: { ...servers.docs!, keepalive: { intervalMs: 200 } } } });
  await sup.start();
  dashboard = await sup.dashboard();
  stream = await readEvents(`${dashboard.url}events`);
});

afterAll(async () => {
  stream?.close();
  await dashboard?.close();
  await sup?.stop();
  await fixture?.close();
});

const base = () => new URL(dashboard.url);
const framesOf = (event: string): Frame[] => stream.frames.filter((frame) => frame.event === event);
/** Every transition the stream carried (they come in frames of those of the last 50 ms). */
const transitions = () =>
  framesOf('transitions').flatMap(
    (frame) => (frame.data as { transitions: { server: string; to: string; cause: string }[] }).transitions,
  );

/** The newest row of a server the stream carried. */
function latestRow(name: string): Row | undefined {
  let row: Row | undefined;
  for (const frame of stream.frames) {
    const rows = (frame.data as { rows?: Row[] }).rows;
    if (frame.event === 'snapshot' || frame.event === 'rows' || frame.event === 'resync')
      row = rows?.find((each) => each.name === name) ?? row;
  }
  return row;
}

describe('the dashboard', () => {
  it('listens on 127.0.0.1 and answers 401 to every address without its token', async () => {
    const url = base();
    expect(url.hostname).toBe('127.0.0.1');
    // Bound to 127.0.0.1 itself, not to every interface (which 127.0.0.2 would reach).
    expect(await reachable('127.0.0.1', Number(url.port))).toBe(true);
    expect(await reachable('127.0.0.2', Number(url.port))).toBe(false);
    const token = url.pathname.split('/')[1]!;
    expect(token.length).toBeGreaterThanOrEqual(32);
    const origin = url.origin;
    for (const path of ['/', '/events', '/app.js', '/api/status', `/${token.slice(1)}x/`, `/x${token}/events`])
      expect((await get(`${origin}${path}`)).status, path).toBe(401);
    for (const action of ['reconnect', 'enable', 'disable'])
      expect((await get(`${origin}/api/servers/docs/${action}`, { method: 'POST' })).status).toBe(401);
    expect((await get(`${origin}/wrong/api/servers/docs/disable`, { method: 'POST' })).status).toBe(401);
    expect(sup.status().docs!.state).toBe('ready');

    const page = await get(dashboard.url);
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).toContain('<script src="app.js">');
    received.push(page.body);
    for (const asset of ['app.js', 'app.css', 'machines.json']) {
      const answer = await get(`${dashboard.url}${asset}`);
      expect(answer.status, asset).toBe(200);
      received.push(answer.body);
    }
    // The diagrams are drawn from the machine definitions: every state is a box the page can light.
    const svgs = JSON.parse(received.at(-1)!) as Record<string, string>;
    expect(Object.keys(svgs)).toEqual(expect.arrayContaining(['connection', 'keepalive', 'listener', 'sse-fallback']));
    for (const state of ['connecting.opening transport', 'ready', 'ready.serving', 'failed.waiting to revive'])
      expect(svgs.connection).toContain(`data-state="${state}"`);
    // Without its trailing slash the page's relative addresses would miss the token: redirected.
    const bare = await get(dashboard.url.slice(0, -1));
    expect(bare.status).toBe(308);
  });

  it('refuses a foreign Host (DNS rebinding) and a foreign Origin, token or not', async () => {
    const { port } = base();
    expect((await get(dashboard.url, { headers: { host: `evil.example:${port}` } })).status).toBe(403);
    expect((await get(dashboard.url, { headers: { host: `127.0.0.1:${Number(port) + 1}` } })).status).toBe(403);
    expect((await get(dashboard.url, { headers: { origin: 'http://evil.example' } })).status).toBe(403);
    expect(
      (await get(`${dashboard.url}api/servers/spare/enable`, { method: 'POST', headers: { origin: 'null' } })).status,
    ).toBe(403);
    expect((await get(dashboard.url, { headers: { host: `localhost:${port}` } })).status).toBe(200);
    expect(sup.status().spare!.state).toBe('disabled');
  });

  it('streams rows with every state (nested, children), era, transport, pid and stderr', async () => {
    await expect.poll(() => framesOf('snapshot').length).toBe(1);
    const docs = latestRow('docs')!;
    expect(docs).toMatchObject({ configured: 'enabled', state: 'ready', transport: 'http', era: 'legacy' });
    expect(docs.states?.connection).toMatch(/^ready\./);
    // Its listening stream is open, and once open the listener hands it over and is stopped
    // (listener.machine.ts): the row shows no listener child while the stream is simply open.
    await expect.poll(() => fixture.getStreamCount()).toBe(1);
    await expect.poll(() => Object.keys(latestRow('docs')?.states ?? {})).not.toContain('listener');
    // An HTTP server shares its origin's keepalive; a stdio server has a keepalive child of its own.
    expect(Object.keys(docs.states ?? {})).not.toContain('keepalive');
    await expect
      .poll(() => Object.keys(latestRow('files')?.states ?? {}))
      .toEqual(expect.arrayContaining(['keepalive']));
    expect(latestRow('spare')).toMatchObject({ configured: 'disabled', state: 'disabled' });
    await expect.poll(() => latestRow('files')?.stderr?.join('\n') ?? '').toContain('token=[redacted]');
    expect(latestRow('files')!.pid).toBeGreaterThan(0);
    // The keepalive's round trip arrives with the sampled rows.
    await expect.poll(() => latestRow('docs')?.rttMs, { timeout: 5_000 }).toBeGreaterThanOrEqual(0);
  });

  it('tells why a server failed, since when, its restarts and its next attempt', async () => {
    const failing = createSupervisor({
      servers: {
        down: {
          url: 'http://127.0.0.1:9/mcp',
          restart: { maxRestarts: 1, backoff: { initialMs: 20, maxMs: 20, factor: 1, jitter: 0 } },
          revive: { initialMs: 60_000, maxMs: 60_000 },
        },
      },
    });
    // Open before the start: the errors come while it listens, so their age is known.
    const board = await failing.dashboard();
    const page = await readEvents(`${board.url}events`);
    try {
      const started = Date.now();
      await failing.start().catch(() => {});
      const row = () => {
        const rows = page.frames.flatMap((frame) => (frame.data as { rows?: Row[] }).rows ?? []);
        return rows.filter((each) => each.name === 'down').at(-1);
      };
      await expect.poll(() => row()?.state).toBe('failed');
      await expect.poll(() => row()?.nextAttemptAt).toBeGreaterThan(Date.now() + 30_000);
      expect(row()!.why).toMatch(/ECONNREFUSED|refused/i);
      expect(row()!.whyAt).toBeGreaterThanOrEqual(started);
      expect(row()!.restarts).toBeGreaterThanOrEqual(1);
      expect(row()!.states?.connection).toMatch(/^failed\./);
      const moves = page.frames
        .filter((frame) => frame.event === 'transitions')
        .flatMap((frame) => (frame.data as { transitions: { to: string; error?: string }[] }).transitions);
      expect(moves.map((move) => move.to)).toContain('failed');
      expect(moves.some((move) => /refused/i.test(move.error ?? ''))).toBe(true);
    } finally {
      page.close();
      await board.close();
      await failing.stop();
    }
  });

  it('logs each call (tool, duration, outcome, sends) without its arguments, and a replay as a second send', async () => {
    await sup.server('docs').callTool('echo', { text: 'private words' });
    await expect.poll(() => framesOf('calls').flatMap((f) => (f.data as { calls: unknown[] }).calls).length).toBe(1);
    const [call] = (framesOf('calls')[0]!.data as { calls: Record<string, unknown>[] }).calls;
    expect(call).toMatchObject({ server: 'docs', method: 'tools/call', tool: 'echo', outcome: 'ok', sends: 1 });
    expect(call!.durationMs).toBeGreaterThan(0);
    expect(call!.args).toBeUndefined();

    // The session expires: the call is answered 404, replayed on a new session, sent twice.
    fixture.expireAllSessions();
    await sup.server('docs').callTool('echo', { text: 'again' });
    const calls = () => framesOf('calls').flatMap((f) => (f.data as { calls: Record<string, unknown>[] }).calls);
    await expect.poll(() => calls().length).toBe(2);
    expect(calls()[1]).toMatchObject({ tool: 'echo', outcome: 'ok', sends: 2 });
    // Its transitions reached the stream with their causes.
    const moves = transitions();
    expect(moves.some((move) => move.server === 'docs' && move.to === 'expired')).toBe(true);
    expect(moves.every((move) => move.cause.length > 0)).toBe(true);
    const detail = await get(`${dashboard.url}api/servers/docs`);
    received.push(detail.body);
    const { timeline } = JSON.parse(detail.body) as { timeline: { to: string }[] };
    expect(timeline.map((entry) => entry.to)).toEqual(expect.arrayContaining(['ready', 'expired', 'reinitializing']));
    expect(JSON.stringify(calls())).not.toContain('private words');
  });

  it('acts with the token: enable, disable, reconnect', async () => {
    const enable = await get(`${dashboard.url}api/servers/spare/enable`, { method: 'POST' });
    expect(enable.status).toBe(202);
    await expect.poll(() => latestRow('spare')?.state).toBe('ready');
    expect(latestRow('spare')!.configured).toBe('enabled');
    const disable = await get(`${dashboard.url}api/servers/spare/disable`, { method: 'POST' });
    expect(disable.status).toBe(202);
    await expect.poll(() => latestRow('spare')?.configured).toBe('disabled');

    const before = transitions().length;
    expect((await get(`${dashboard.url}api/servers/docs/reconnect`, { method: 'POST' })).status).toBe(202);
    await expect
      .poll(() =>
        transitions()
          .slice(before)
          .map((move) => move.to),
      )
      .toContain('ready');
    expect((await get(`${dashboard.url}api/servers/nobody/disable`, { method: 'POST' })).status).toBe(409);
    expect((await get(`${dashboard.url}api/servers/docs/reconnect`)).status).toBe(405);
  });

  it('sends nothing secret: no header, query key, ${VAR} value, session id or stderr secret', async () => {
    received.push(stream.text(), (await get(`${dashboard.url}api/status`)).body);
    received.push((await get(`${dashboard.url}api/servers/files`)).body);
    const sessions = new Set(
      fixture.requests.map((r) => r.headers['mcp-session-id']).filter((id): id is string => typeof id === 'string'),
    );
    expect(sessions.size).toBeGreaterThanOrEqual(2);
    const everything = received.join('\n');
    expect(everything).toContain('token=[redacted]'); // the stderr line was there, without its secret
    for (const secret of [API_KEY, QUERY_KEY, STDIO_SECRET, `Bearer ${API_KEY}`, ...sessions])
      expect(everything, `leaks ${secret.slice(0, 6)}…`).not.toContain(secret);
  });
});
