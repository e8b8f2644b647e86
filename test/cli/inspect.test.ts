/** `mcp-supervisor inspect`: the Stately inspector's bridge receives the live, sanitized actor tree. */
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { collectWebSocket, freePort, spawnCli, useBuiltCli } from './helpers.js';

// The built CLI, compiled once for the run (test/package/build.ts), not by tsx at every spawn.
beforeAll(useBuiltCli, 240_000);

let fixture: HttpFixture | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
});

interface StatelyEvent {
  type: string;
  name?: string;
  sessionId: string;
}

describe('mcp-supervisor inspect', () => {
  it('sends the actor tree (connection, listener) to the inspector, without the token or session ids', async () => {
    fixture = await startHttpFixture({ responseMode: 'sse' });
    const port = await freePort();
    const cli = spawnCli([
      'inspect',
      '--url',
      fixture.url,
      '--name',
      'docs',
      '--header',
      'Authorization: Bearer s3cret-inspect',
      '--port',
      String(port),
      '--no-open',
    ]);
    await cli.waitForLine(/Stately inspector: open http:\/\/127\.0\.0\.1:\d+/);
    await cli.waitForLine(/docs {2}initializing -> ready/);
    const ws = await collectWebSocket(`ws://127.0.0.1:${port}`);
    try {
      // The bridge replays what it has buffered, then forwards live events.
      await expect
        .poll(() => ws.messages.map((m) => (JSON.parse(m) as StatelyEvent).name).filter(Boolean), { timeout: 10_000 })
        .toEqual(expect.arrayContaining(['docs', 'listener']));
      const text = ws.messages.join('\n');
      expect(text).not.toContain('s3cret-inspect');
      for (const id of fixture.sessions) expect(text).not.toContain(id);
      expect(fixture.requests.some((r) => r.headers.authorization === 'Bearer s3cret-inspect')).toBe(true);
    } finally {
      ws.close();
    }
    // Bound to 127.0.0.1 itself, not to every interface (which 127.0.0.2, another loopback address, would reach).
    expect(await reachable('127.0.0.2', port)).toBe(false);
    // Loopback only, and only for itself: another name (DNS rebinding) or another page's socket is refused.
    expect(await status(port, { host: `evil.example:${port}` })).toBe(403);
    expect(await status(port, { host: `127.0.0.1:${port}` })).toBe(200);
    const upgrade = { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13' };
    const key = { 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' };
    expect(await status(port, { ...upgrade, ...key, origin: 'http://evil.example' })).toBe(401);
    cli.child.kill('SIGINT');
    expect(await cli.exited).toBe(0);
  });
});

/** The status of a GET (or a refused upgrade) to the bridge on 127.0.0.1 with these headers. */
function status(port: number, headers: Record<string, string>): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, headers }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    req.once('upgrade', (_response, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.once('error', reject);
    req.end();
  });
}

function reachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
