/**
 * The MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`, a real host's client, run
 * offline) against `mcp-supervisor serve` (issue #32): over stdio, as a host's `command`, and over
 * Streamable HTTP with the bearer token, across an upstream restart that answers 400 to the old
 * session. Soak: every Inspector run is a child process of its own.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSdkExampleServer, type SdkExampleServer } from '../../servers/sdk-example-server.js';
import { ROOT } from '../cli/helpers.js';
import { startGateway, TOKEN, type RunningGateway } from '../gateway/helpers.js';

const INSPECTOR = join(ROOT, 'node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js');

let upstream: SdkExampleServer;
let gw: RunningGateway;
let dir: string;

beforeAll(async () => {
  upstream = await startSdkExampleServer();
  gw = await startGateway({ servers: { example: { url: upstream.url, keepalive: false } }, holdMs: 20_000 });
  dir = mkdtempSync(join(tmpdir(), 'gateway-inspector-'));
});

afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface InspectorRun {
  code: number;
  json: unknown;
  stderr: string;
}

/** One Inspector CLI run; its answer is the JSON it prints on stdout. */
async function inspector(args: string[]): Promise<InspectorRun> {
  const env = {
    ...process.env,
    // No OS keychain here: secrets (the bearer token) stay in the Inspector's memory.
    MCP_INSPECTOR_SECRET_STORE: 'memory',
    MCP_CATALOG_PATH: join(dir, 'catalog.json'),
    MCP_SUPERVISOR_STORE: join(dir, 'store.json'),
  };
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [INSPECTOR, '--cli', ...args], {
      cwd: ROOT,
      env,
      timeout: 60_000,
    });
    return { code: 0, json: JSON.parse(stdout), stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    const json = failed.stdout ? (JSON.parse(failed.stdout) as unknown) : undefined;
    return { code: failed.code ?? -1, json, stderr: failed.stderr ?? '' };
  }
}

const echo = (text: string) => ['--method', 'tools/call', '--tool-name', 'example__echo', '--tool-arg', `text=${text}`];
const contentText = (json: unknown) => (json as { content?: Array<{ text?: string }> }).content?.[0]?.text;

describe('the MCP Inspector CLI as the host', () => {
  it('over stdio: serve is the command, the tools come under the catalog names and a call answers', async () => {
    const config = join(dir, 'stdio.json');
    writeFileSync(config, JSON.stringify({ mcpServers: { example: { url: upstream.url, keepalive: false } } }));
    const serve = ['--', process.execPath, '--import', 'tsx', 'src/cli/main.ts', 'serve', '--config', config];

    const listed = await inspector(['--method', 'tools/list', ...serve]);
    expect(listed.code).toBe(0);
    const names = (listed.json as { tools: Array<{ name: string }> }).tools.map((tool) => tool.name);
    expect(names).toContain('example__echo');

    const called = await inspector([...echo('over stdio'), ...serve]);
    expect(called.code).toBe(0);
    expect(contentText(called.json)).toBe('over stdio');
  });

  it('over HTTP: refused without the token, answered with it, and again after the upstream restarted', async () => {
    const refused = await inspector([gw.http.url, '--method', 'tools/list']);
    expect(refused.code).not.toBe(0);
    expect(refused.json).toBeUndefined();
    expect(refused.stderr).toContain('auth_required'); // the 401 made the Inspector ask for a login

    const bearer = ['--header', `Authorization: Bearer ${TOKEN}`];
    const before = await inspector([gw.http.url, ...echo('before'), ...bearer]);
    expect(before.code).toBe(0);
    expect(contentText(before.json)).toBe('before');

    await upstream.restart(); // the old upstream session now gets 400, as the SDK examples answer
    const after = await inspector([gw.http.url, ...echo('after restart'), ...bearer]);
    expect(after.code).toBe(0);
    expect(contentText(after.json)).toBe('after restart');
    expect(`${before.stderr}${after.stderr}`).not.toContain(TOKEN);
  });
});
