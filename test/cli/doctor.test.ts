/**
 * `doctor`, in-process against servers this file starts: a healthy Streamable HTTP server, a port
 * nothing listens on, a 401, a legacy HTTP+SSE server, a wrong path, a stdio server that exits,
 * a missing command; and once as a spawned CLI in a folder with `.mcp.json` (discovery).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/commands.js';
import type { ServerMap } from '../../src/cli/load-config.js';
import { startLegacySseFixture, type LegacySseFixture } from '../../servers/legacy-sse-fixture.js';
import { startSdkServer, type SdkServer } from '../../servers/sdk-servers.js';
import { freePort, runCli } from './helpers.js';

let sdk: SdkServer;
let legacy: LegacySseFixture;
let guarded: Server;
let guardedUrl: string;

beforeAll(async () => {
  [sdk, legacy] = await Promise.all([startSdkServer({ stateful: true }), startLegacySseFixture()]);
  guarded = createServer((req, res) => {
    req.resume();
    res.writeHead(401, {
      'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"',
    });
    res.end();
  });
  await new Promise<void>((resolve) => guarded.listen(0, '127.0.0.1', resolve));
  guardedUrl = `http://127.0.0.1:${(guarded.address() as { port: number }).port}/mcp`;
});
afterAll(async () => {
  await Promise.all([sdk.close(), legacy.close(), new Promise((resolve) => guarded.close(resolve))]);
});

async function doctor(servers: ServerMap): Promise<{ code: number; text: string }> {
  let text = '';
  const code = await runDoctor(servers, [], 3_000, {
    out: (chunk) => void (text += chunk),
    err: (chunk) => void (text += chunk),
  });
  return { code, text };
}

describe('doctor', () => {
  it('passes every step of a healthy server: DNS, TCP, HTTP, authorization, initialize, era, tools, round trip', async () => {
    const { code, text } = await doctor({ ok: { url: sdk.url } });
    expect(code).toBe(0);
    for (const step of [
      '✓ DNS',
      '✓ TCP',
      '- TLS',
      '✓ HTTP          POST /mcp → 200',
      '✓ authorization none asked for',
      '✓ initialize',
      '✓ era           2025-era',
      '✓ tools',
      '✓ round trip    ping',
    ])
      expect(text).toContain(step);
    expect(text).toContain('countdown');
    expect(text).toContain('all steps passed');
    expect(sdk.sessionCount()).toBe(0); // the probe's session and the runtime's were closed
  });

  it('names the failed step and what to do: refused, 401, wrong path, legacy SSE', async () => {
    const port = await freePort();
    const { code, text } = await doctor({
      refused: { url: `http://127.0.0.1:${port}/mcp` },
      guarded: { url: guardedUrl },
      path: { url: sdk.url.replace(/\/mcp$/, '/nope') },
      legacy: { url: `${legacy.origin}/sse`, type: 'auto' },
    });
    expect(code).toBe(1);
    expect(text).toMatch(/✗ TCP +127\.0\.0\.1:\d+ refused the connection[^\n]*\n +→ start the server/);
    expect(text).toMatch(
      /✗ authorization HTTP 401: the server wants authorization \(protected resource metadata: [^)]+\)\n +→ add "auth": \{\}/,
    );
    expect(text).toMatch(/✗ HTTP +POST \/nope → 404[^\n]*\n +→ check the path/);
    expect(text).toMatch(/legacy HTTP\+SSE server\n +→ "type": "auto"/);
    expect(text.match(/- the rest +skipped/g)?.length).toBe(3);
  });

  it('stdio: a missing command, and a process that exits, with its exit code and stderr', async () => {
    const { code, text } = await doctor({
      missing: { command: 'mcp-supervisor-no-such-command' },
      crash: { command: process.execPath, args: ['-e', "console.error('cannot open /nope'); process.exit(3)"] },
    });
    expect(code).toBe(1);
    expect(text).toMatch(/✗ command +mcp-supervisor-no-such-command: not found on PATH[^\n]*\n +→ install it/);
    expect(text).toMatch(/✗ process +exited with code 3; stderr:\n +cannot open \/nope\n +→ /);
  });

  it('as a command, in a folder with .mcp.json: says which file it used', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'mcp-supervisor-doctor-'));
    try {
      writeFileSync(join(folder, '.mcp.json'), JSON.stringify({ mcpServers: { sdk: { url: sdk.url } } }));
      const run = await runCli(['doctor'], {}, folder);
      expect(run.stderr).toContain('using ./.mcp.json');
      expect(run.stdout).toContain('all steps passed');
      expect(run.code).toBe(0);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
