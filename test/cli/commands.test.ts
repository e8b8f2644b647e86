/** `status`, `tools`, `call` and `diagram`, run as a user would, against real servers. */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MACHINES } from '../../machines/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { startSdkServer, type SdkServer } from '../../servers/sdk-servers.js';
import { ROOT, runCli, useBuiltCli } from './helpers.js';

// The built CLI, compiled once for the run (test/package/build.ts), not by tsx at every spawn.
beforeAll(useBuiltCli, 240_000);

let fixture: HttpFixture;
let sdk: SdkServer;
beforeAll(async () => {
  [fixture, sdk] = await Promise.all([startHttpFixture(), startSdkServer({ stateful: true })]);
});
afterAll(async () => {
  await Promise.all([fixture.close(), sdk.close()]);
});

const STDIO_SERVER = 'servers/stdio-server.mjs';

describe('mcp-supervisor status', () => {
  it('prints every server status as JSON, the authorization header never shown', async () => {
    const { code, stdout, stderr } = await runCli([
      'status',
      '--url',
      fixture.url,
      '--name',
      'docs',
      '--header',
      'authorization: Bearer s3cret-status',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const status = JSON.parse(stdout) as Record<
      string,
      { name: string; state: string; transport: string; sessionId: string; protocolVersion: string }
    >;
    expect(status.docs).toMatchObject({ name: 'docs', state: 'ready', transport: 'http', sessionId: '[redacted]' });
    expect(stdout).not.toContain('s3cret-status');
    expect(fixture.requests.some((r) => r.headers.authorization === 'Bearer s3cret-status')).toBe(true);
  });

  it('exits 1 when a server is not ready, still printing its status', async () => {
    const { code, stdout } = await runCli(['status', '--url', 'http://127.0.0.1:9/mcp', '--name', 'nowhere']);
    expect(code).toBe(1);
    const status = JSON.parse(stdout) as Record<string, { state: string; lastError: string }>;
    expect(status.nowhere!.state).not.toBe('ready');
    expect(status.nowhere!.lastError).toBeTruthy();
  });

  it('runs a stdio server from --command with --arg, and with the arguments after --', async () => {
    for (const args of [
      ['--command', process.execPath, '--arg', STDIO_SERVER],
      ['--command', process.execPath, '--', STDIO_SERVER, '--tag', 'cli-test'],
    ]) {
      const { code, stdout, stderr } = await runCli(['status', '--name', 'local', ...args]);
      expect(stderr).toBe('');
      expect(code).toBe(0);
      const status = JSON.parse(stdout) as Record<string, { state: string; transport: string; pid: number }>;
      expect(status.local).toMatchObject({ state: 'ready', transport: 'stdio' });
      expect(status.local!.pid).toBeGreaterThan(0);
    }
  });
});

describe('mcp-supervisor tools / call', () => {
  it('tools <server> --json prints the tool list', async () => {
    const { code, stdout } = await runCli(['tools', 'sdk', '--json', '--url', sdk.url, '--name', 'sdk']);
    expect(code).toBe(0);
    const { tools } = JSON.parse(stdout) as { tools: { name: string }[] };
    expect(tools.map((t) => t.name).sort()).toEqual(['add', 'countdown', 'echo']);
  });

  it('call <server> <tool> <json> prints the result', async () => {
    const { code, stdout } = await runCli(['call', 'sdk', 'add', '{"a":2,"b":40}', '--url', sdk.url, '--name', 'sdk']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ content: [{ type: 'text', text: '42' }] });
  });

  it('leaves the server out when only one is configured', async () => {
    const { code, stdout } = await runCli(['call', 'echo', '{"text":"hi"}', '--url', fixture.url]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ content: [{ type: 'text', text: 'hi' }] });
  });

  it('picks the named server from a config file of several', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-supervisor-cli-'));
    const config = join(dir, 'two.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { a: { url: fixture.url }, b: { url: sdk.url } } }));
    try {
      const tools = await runCli(['tools', 'b', '--json', '--config', config]);
      expect(tools.code).toBe(0);
      expect((JSON.parse(tools.stdout) as { tools: unknown[] }).tools).toHaveLength(3);
      const ambiguous = await runCli(['tools', '--config', config]);
      expect(ambiguous.code).toBe(2);
      expect(ambiguous.stderr).toContain('which server? (configured: a, b)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a JSON-RPC error exits 1 with the error on stderr; bad arguments exit 2', async () => {
    const unknown = await runCli(['call', 'nope', '--url', fixture.url]);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/MCP error -32602: Unknown tool: nope/);
    const bad = await runCli(['call', 'echo', '{text:', '--url', fixture.url]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('the tool arguments are not valid JSON');
    const notObject = await runCli(['call', 'echo', '[1]', '--url', fixture.url]);
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toContain('must be a JSON object');
  });
});

describe('mcp-supervisor diagram', () => {
  it('diagram connection prints exactly docs/machines/connection.mmd', async () => {
    const { code, stdout } = await runCli(['diagram', 'connection']);
    expect(code).toBe(0);
    expect(stdout).toBe(readFileSync(`${ROOT}docs/machines/connection.mmd`, 'utf8'));
  });

  it('diagram prints every machine; an unknown one exits 2 naming the choices', async () => {
    const all = await runCli(['diagram']);
    expect(all.code).toBe(0);
    for (const name of Object.keys(MACHINES)) expect(all.stdout).toContain(`%% ${name}\nstateDiagram-v2\n`);
    const unknown = await runCli(['diagram', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(`unknown machine 'nope': one of ${Object.keys(MACHINES).join(', ')}`);
  });
});

describe('usage', () => {
  it('--help exits 0; an unknown command or option exits 2', async () => {
    const help = await runCli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: mcp-supervisor <command> [options]');
    const command = await runCli(['frobnicate']);
    expect(command.code).toBe(2);
    expect(command.stderr).toContain("unknown command 'frobnicate'");
    const option = await runCli(['status', '--frobnicate']);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain('--frobnicate');
    const none = await runCli(['status']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no servers');
  });
});
