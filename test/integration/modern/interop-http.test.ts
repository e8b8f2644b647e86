/**
 * Interop over Streamable HTTP with servers built with the official v2 server package, in each
 * of its modes: modern-only, dual-era and legacy-only. The era the runtime picks, the wire it
 * speaks (seen on the server), pinning, and a restart of a modern server.
 */
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createSupervisor, type ServerHandle, type Supervisor, type TransitionEvent } from '../../../src/index.js';
import { listenOnLoopback, type Listening } from '../../../servers/listen.js';
import { nextTransition } from '../helpers.js';
import { startV2Server, type V2Server } from './v2-server.js';

let server: V2Server | undefined;
let supervisor: Supervisor | undefined;
let other: Listening | undefined;
afterEach(async () => {
  await supervisor?.stop().catch(() => {});
  await server?.close();
  await other?.close();
  supervisor = server = other = undefined;
});

const FAST_RESTART = { backoff: { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 } };

/** A supervisor of one server, started: ready, or down after its first attempt. */
async function supervise(
  url: string,
  protocolVersion?: string,
): Promise<{ handle: ServerHandle; transitions: TransitionEvent[] }> {
  supervisor = createSupervisor({
    servers: {
      interop: {
        url,
        keepalive: false,
        restart: { ...FAST_RESTART, maxRestarts: 0 },
        requestTimeoutMs: 5_000,
        protocolVersion,
      },
    },
    clientInfo: { name: 'interop-client', version: '1.0.0' },
  });
  const transitions: TransitionEvent[] = [];
  supervisor.on('transition', (e) => transitions.push(e));
  await supervisor.start();
  return { handle: supervisor.server('interop'), transitions };
}

async function open(mode: 'modern' | 'dual' | 'legacy', protocolVersion?: string) {
  server = await startV2Server(mode);
  return { server, ...(await supervise(server.url, protocolVersion)) };
}

function echoText(result: unknown): string {
  return ((result as { content: Array<{ text: string }> }).content[0] ?? { text: '' }).text;
}

describe('a modern-only server (createMcpHandler, legacy: reject)', () => {
  it('is discovered and spoken to on the modern wire: _meta envelope, Mcp-Method/Mcp-Name, no session, no GET', async () => {
    const { server, handle } = await open('modern');
    expect(handle.status()).toMatchObject({
      state: 'ready',
      era: 'modern',
      protocolVersion: '2026-07-28',
      transport: 'http',
      serverInfo: { name: 'v2-modern', version: '2.0.0' },
      sessionId: undefined,
      lastError: undefined,
    });
    expect(echoText(await handle.callTool('echo', { text: 'héllo' }))).toBe('héllo');
    // The listener's `subscriptions/listen` (listen-http.test.ts) stands for the GET stream.
    const [discover, call] = server.seen.filter(
      (r) => (r.body as { method?: string }).method !== 'subscriptions/listen',
    );
    expect(discover).toMatchObject({
      method: 'POST',
      headers: { 'mcp-method': 'server/discover', 'mcp-protocol-version': '2026-07-28' },
      body: { method: 'server/discover' },
    });
    expect(call).toMatchObject({
      headers: { 'mcp-method': 'tools/call', 'mcp-name': 'echo', 'mcp-protocol-version': '2026-07-28' },
      body: {
        method: 'tools/call',
        params: {
          name: 'echo',
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'interop-client', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      },
    });
    expect(server.seen.every((r) => r.method === 'POST' && r.headers['mcp-session-id'] === undefined)).toBe(true);
    expect(server.seen.some((r) => (r.body as { method?: string }).method === 'initialize')).toBe(false);
  });

  it('goes connecting -> discovering -> ready', async () => {
    const { transitions } = await open('modern');
    expect(transitions.map((t) => `${t.from ?? ''}->${t.to}`).slice(0, 3)).toEqual([
      '->connecting',
      'connecting->discovering',
      'discovering->ready',
    ]);
  });

  it('pinned legacy: the initialize refused with -32022 is a clear error, not "legacy SSE probe failed too"', async () => {
    const { handle } = await open('modern', 'legacy');
    expect(handle.status().state, 'fatal: a restart would ask the same').toBe('failed');
    expect(handle.status().lastError).toMatch(
      /does not support protocol version 2025-11-25 \(it supports: 2026-07-28\)/,
    );
    expect(handle.status().lastError).not.toMatch(/legacy SSE/);
  });

  it('after a restart (down a while, then back on the same port) a call made while down goes through and the discovery is fresh', async () => {
    const { server: first, handle } = await open('modern');
    const port = new URL(first.url).port;
    const down = nextTransition(handle, (t) => t.to === 'reconnecting');
    await first.close();
    server = undefined;
    // The listener's refused re-listen notices it (a call sent at once could meet a socket the
    // server closed a moment ago: its outcome would be unknown).
    await down;
    const call = handle.callTool('echo', { text: 'after restart' });
    server = await startV2Server('modern', Number(port), 'v2-modern-restarted');
    expect(echoText(await call)).toBe('after restart');
    expect(handle.status()).toMatchObject({
      state: 'ready',
      era: 'modern',
      serverInfo: { name: 'v2-modern-restarted' },
    });
    const methods = server.seen.map((r) => (r.body as { method: string }).method);
    expect(methods.filter((m) => m !== 'subscriptions/listen')).toEqual(['server/discover', 'tools/call']);
  });
});

describe('a dual-era server (createMcpHandler, legacy: stateless)', () => {
  it('is spoken to in the modern era by default', async () => {
    const { handle } = await open('dual');
    expect(handle.status()).toMatchObject({ state: 'ready', era: 'modern', protocolVersion: '2026-07-28' });
    expect(echoText(await handle.callTool('echo', { text: 'x' }))).toBe('x');
  });

  it('pinned legacy: no probe, an initialize session with the pinned version', async () => {
    const { server, handle } = await open('dual', '2025-06-18');
    expect(handle.status()).toMatchObject({ state: 'ready', era: 'legacy', protocolVersion: '2025-06-18' });
    expect(echoText(await handle.callTool('echo', { text: 'y' }))).toBe('y');
    const methods = server.seen.map((r) => (r.body as { method?: string } | undefined)?.method);
    expect(methods).not.toContain('server/discover');
    expect(methods[0]).toBe('initialize');
  });
});

describe('a legacy-only server (legacyStatelessFallback)', () => {
  it('the probe is refused without a modern error: initialize follows, over Streamable HTTP still', async () => {
    const { server, handle, transitions } = await open('legacy');
    expect(handle.status()).toMatchObject({
      state: 'ready',
      era: 'legacy',
      protocolVersion: '2025-11-25',
      transport: 'http',
    });
    expect(echoText(await handle.callTool('echo', { text: 'z' }))).toBe('z');
    const methods = server.seen.map((r) => (r.body as { method?: string } | undefined)?.method);
    expect(methods.slice(0, 2)).toEqual(['server/discover', 'initialize']);
    expect(transitions.map((t) => t.to).slice(0, 4)).toEqual(['connecting', 'discovering', 'initializing', 'ready']);
  });

  it('pinned modern: fails for good with an error that says so', async () => {
    const { handle } = await open('legacy', 'modern');
    expect(handle.status().state).toBe('failed');
    expect(handle.status().lastError).toMatch(/does not speak a modern protocol version \(pinned by protocolVersion\)/);
  });
});

describe('a modern server that speaks none of our versions', () => {
  it('fails for good naming its versions, without trying legacy SSE', async () => {
    const http = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: {
              code: -32022,
              message: 'Unsupported protocol version',
              data: { supported: ['2099-01-01'], requested: '2026-07-28' },
            },
          }),
        );
      });
    });
    other = await listenOnLoopback(http);
    const { handle } = await supervise(`${other.origin}/mcp`);
    expect(handle.status().state).toBe('failed');
    expect(handle.status().lastError).toMatch(/2099-01-01/);
    expect(handle.status().lastError).not.toMatch(/legacy SSE/);
  });
});
