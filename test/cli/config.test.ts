/** `--config` files: the formats of Claude Desktop, Cursor and VS Code, and errors that point at the mistake. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { runCli, useBuiltCli } from './helpers.js';

// The built CLI, compiled once for the run (test/package/build.ts), not by tsx at every spawn.
beforeAll(useBuiltCli, 240_000);

let dir: string;
let fixture: HttpFixture;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'mcp-supervisor-config-'));
  fixture = await startHttpFixture();
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await fixture.close();
});

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('--config', () => {
  it('reads the mcpServers format (Claude Desktop, Cursor)', async () => {
    const config = file('claude.json', JSON.stringify({ mcpServers: { docs: { url: fixture.url } } }, null, 2));
    const { code, stdout } = await runCli(['status', '--config', config]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ docs: { state: 'ready' } });
  });

  it("reads VS Code's mcp.json: a `servers` key, comments and trailing commas", async () => {
    const config = file(
      'mcp.json',
      `{
  // VS Code allows comments
  "servers": {
    "docs": { "type": "http", "url": "${fixture.url}", }, /* and trailing commas */
  },
  "inputs": [],
}`,
    );
    const { code, stdout, stderr } = await runCli(['status', '--config', config]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ docs: { state: 'ready', transport: 'http' } });
  });

  it('invalid JSON: the error names the file, the line and the column', async () => {
    const config = file('broken.json', '{\n  "mcpServers": {\n    "docs": { "url": }\n  }\n}\n');
    const { code, stderr } = await runCli(['status', '--config', config]);
    expect(code).toBe(2);
    expect(stderr).toContain(`${config}: invalid JSON at line 3, column 22: expected a value, unexpected "}"`);
  });

  it('invalid JSON without a position in the V8 message still gets one', async () => {
    const config = file('truncated.json', '{\n  "mcpServers": {\n    "docs": { "url": "http://x/mcp" }');
    const { code, stderr } = await runCli(['status', '--config', config]);
    expect(code).toBe(2);
    expect(stderr).toMatch(
      new RegExp(
        `${config.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: invalid JSON at line 3, column 38: expected ',' or '}'`,
      ),
    );
  });

  it('a bad field: the error names the file and servers.<name>.<field>', async () => {
    const config = file(
      'bad-field.json',
      JSON.stringify({ mcpServers: { ok: { url: fixture.url }, docs: { url: 'ftp://example.com' } } }),
    );
    const { code, stderr } = await runCli(['status', '--config', config]);
    expect(code).toBe(2);
    expect(stderr).toContain(`${config}: servers.docs.url: must be an http:// or https:// URL`);
    const timeout = file(
      'bad-timeout.json',
      JSON.stringify({ mcpServers: { docs: { url: fixture.url, requestTimeoutMs: 'soon' } } }),
    );
    const second = await runCli(['status', '--config', timeout]);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`${timeout}: servers.docs.requestTimeoutMs:`);
  });

  it('no mcpServers map, a missing file, a name defined twice', async () => {
    const empty = file('empty.json', '{"servers": 3}');
    const noMap = await runCli(['status', '--config', empty]);
    expect(noMap.code).toBe(2);
    expect(noMap.stderr).toContain(`${empty}: mcpServers: missing`);
    const missing = await runCli(['status', '--config', join(dir, 'nope.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${join(dir, 'nope.json')}: cannot read the config file (no such file)`);
    const a = file('a.json', JSON.stringify({ mcpServers: { docs: { url: fixture.url } } }));
    const b = file('b.json', JSON.stringify({ mcpServers: { docs: { url: fixture.url } } }));
    const twice = await runCli(['status', '--config', a, '--config', b]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(`server 'docs' is defined twice: in ${a} and in ${b}`);
  });

  it('--url and --command are one server each, and not both', async () => {
    const both = await runCli(['status', '--url', fixture.url, '--command', 'node']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--url and --command cannot be combined');
    const header = await runCli(['status', '--url', fixture.url, '--header', 'no-separator']);
    expect(header.code).toBe(2);
    expect(header.stderr).toContain("expected 'Name: value'");
  });

  it('expands ${VAR} from the environment; a missing one names file, server, field and variable', async () => {
    const config = file(
      'vars.json',
      JSON.stringify({ mcpServers: { docs: { url: '${DOCS_URL}', headers: { 'X-Key': '${DOCS_KEY:-none}' } } } }),
    );
    const ok = await runCli(['status', '--config', config], { DOCS_URL: fixture.url });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ docs: { state: 'ready' } });
    const missing = await runCli(['status', '--config', config], { DOCS_URL: '' });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`${config}: servers.docs.url: must be an http:// or https:// URL`);
    const unset = await runCli(['status', '--config', config], { DOCS_URL: undefined });
    expect(unset.code).toBe(2);
    expect(unset.stderr).toContain(`${config}: servers.docs.url: the environment variable DOCS_URL is not set`);
  });

  it('warns about a typo with the file named; --strict refuses it', async () => {
    const config = file('typo.json', JSON.stringify({ mcpServers: { docs: { url: fixture.url, headrs: {} } } }));
    const loose = await runCli(['status', '--config', config]);
    expect(loose.code).toBe(0);
    expect(loose.stderr).toBe(
      `mcp-supervisor: warning: ${config}: servers.docs.headrs: unknown field (did you mean \`headers\`?)\n`,
    );
    const strict = await runCli(['status', '--strict', '--config', config]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain(`${config}: servers.docs.headrs: unknown field (did you mean \`headers\`?)`);
  });

  it('a disabled server is listed, not started, and does not fail status', async () => {
    const config = file(
      'disabled.json',
      JSON.stringify({
        mcpServers: { docs: { url: fixture.url }, off: { command: 'no-such-command', disabled: true } },
      }),
    );
    const { code, stdout } = await runCli(['status', '--config', config]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ docs: { state: 'ready' }, off: { state: 'disabled' } });
  });
});
