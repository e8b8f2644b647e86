/**
 * A loaded file's warnings reach onWarning / the logger / process.emitWarning through
 * createSupervisor and apply; an unclosed `${` is an error; Windsurf's `serverUrl` and Gemini
 * CLI's `httpUrl` read as `url`; unknown top-level keys warn with "did you mean".
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  createSupervisor,
  fromMcpServersJson,
  loadConfig,
  parseServerConfig,
  type ConfigWarning,
} from '../../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'mcp-supervisor-first-hour-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, json: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(json));
  return path;
}

const typo = file('typo.json', {
  mcpServer: {},
  mcpServers: { docs: { url: 'http://127.0.0.1:9/mcp', headrs: {} } },
});

describe('a loaded config’s warnings', () => {
  it('reach onWarning through createSupervisor(await loadConfig(file)), with the file named', async () => {
    const seen: ConfigWarning[] = [];
    const sup = createSupervisor({ ...(await loadConfig(typo)), onWarning: (w) => seen.push(w) });
    expect(seen.map((w) => `${w.path}: ${w.message}`)).toEqual([
      'mcpServer: unknown top-level key (did you mean `mcpServers`?)',
      'servers.docs.headrs: unknown field (did you mean `headers`?)',
    ]);
    expect(seen.every((w) => w.file === typo)).toBe(true);
    await sup.stop();
  });

  it('reach the logger when there is no onWarning, and apply() reports a reloaded file’s too', async () => {
    const lines: string[] = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (_: object, message?: string) => lines.push(message!) };
    const config = await loadConfig(typo);
    const sup = createSupervisor({ servers: config.servers, logger });
    expect(lines).toEqual([]); // a bare servers map: the loader's check is not repeated
    await sup.apply(config);
    expect(lines).toContain(`${typo}: servers.docs.headrs: unknown field (did you mean \`headers\`?)`);
    await sup.stop();
  });

  it('reach process.emitWarning when neither is given', async () => {
    const warnings: string[] = [];
    const listener = (warning: Error) => warnings.push(warning.message);
    process.on('warning', listener);
    try {
      const sup = createSupervisor(await loadConfig(typo));
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toContain(`${typo}: mcpServer: unknown top-level key (did you mean \`mcpServers\`?)`);
      await sup.stop();
    } finally {
      process.off('warning', listener);
    }
  });

  it('are not reported twice when loadConfig had its own onWarning', async () => {
    const atLoad: ConfigWarning[] = [];
    const atCreate: ConfigWarning[] = [];
    const config = await loadConfig(typo, { onWarning: (w) => atLoad.push(w) });
    const sup = createSupervisor({ ...config, onWarning: (w) => atCreate.push(w) });
    expect(atLoad).toHaveLength(2);
    expect(atCreate).toHaveLength(0);
    await sup.stop();
  });

  it('strict: an unknown top-level key is an error', async () => {
    await expect(loadConfig(typo, { strict: true })).rejects.toThrow(/mcpServer: unknown top-level key/);
  });

  it('a file without a servers map names the near miss, in the message and in the issue (what the CLI prints)', () => {
    expect(() => fromMcpServersJson({ mcp_servers: { a: { url: 'http://x/mcp' } } })).toThrow(
      /`mcp_servers` looks like a typo of `mcpServers`/,
    );
    const missing = caught(() => fromMcpServersJson({ mcpServrs: { a: { url: 'http://x/mcp' } } }));
    expect(missing.issues).toEqual([
      { path: 'mcpServers', message: 'missing; `mcpServrs` looks like a typo of `mcpServers`' },
    ]);
    // An empty map beside the misspelled one: the same hint.
    const empty = caught(() => fromMcpServersJson({ servers: {}, mcpServrs: { a: { url: 'http://x/mcp' } } }));
    expect(empty.issues).toEqual([
      { path: 'servers', message: 'at least one server is needed; `mcpServrs` looks like a typo of `mcpServers`' },
    ]);
  });

  it('a nested key says what it meant: auth.clientID, keepalive.intervalMS, restart.backoff.initialMS', () => {
    const error = caught(() =>
      fromMcpServersJson({
        mcpServers: {
          a: { url: 'http://x/mcp', auth: { clientID: 'c' } },
          b: { url: 'http://x/mcp', keepalive: { intervalMS: 5_000 } },
          c: { url: 'http://x/mcp', restart: { backoff: { initialMS: 10 } } },
          d: { url: 'http://x/mcp', keepalive: { zzzzzz: 1 } },
        },
      }),
    );
    expect(error.issues).toEqual([
      { path: 'servers.a.auth', message: 'Unrecognized key: "clientID" (`clientID`: did you mean `clientId`?)' },
      {
        path: 'servers.b.keepalive',
        message: 'Unrecognized key: "intervalMS" (`intervalMS`: did you mean `intervalMs`?)',
      },
      {
        path: 'servers.c.restart.backoff',
        message: 'Unrecognized key: "initialMS" (`initialMS`: did you mean `initialMs`?)',
      },
      { path: 'servers.d.keepalive', message: 'Unrecognized key: "zzzzzz"' },
    ]);
  });

  it("a real Claude Desktop file: its own top-level keys and an entry's extensionId are silent", () => {
    const seen: ConfigWarning[] = [];
    fromMcpServersJson(
      {
        globalShortcut: 'Alt+Space',
        isUsingBuiltInNodeForMcp: true,
        preferences: { quickEntryShortcut: 'off' },
        features: { isDxtEnabled: true },
        mcpServers: {
          files: {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
            extensionId: 'ant.dir.files',
          },
        },
        globalShortcutt: 'x',
      },
      { onWarning: (w) => seen.push(w) },
    );
    expect(seen.map((w) => `${w.path}: ${w.message}`)).toEqual([
      'globalShortcutt: unknown top-level key (ignored: this loader reads `mcpServers`, `servers` and `inputs`)',
    ]);
  });

  it('an `npx mcp-remote <url>` entry warns, naming the server and the URL to connect to directly (strict too: advice, not an error)', () => {
    const config = {
      mcpServers: {
        linear: { command: 'npx', args: ['-y', 'mcp-remote', 'https://mcp.linear.app/mcp?token=t'] },
        local: { command: 'pnpm', args: ['dlx', 'mcp-remote@latest', 'http://127.0.0.1:3001/mcp', '--allow-http'] },
        other: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'] },
      },
    };
    for (const strict of [false, true]) {
      const seen: ConfigWarning[] = [];
      fromMcpServersJson(config, { strict, onWarning: (w) => seen.push(w) });
      expect(seen.map((w) => `${w.path}: ${w.message}`)).toEqual([
        'servers.linear.command: runs mcp-remote, a stdio bridge to https://mcp.linear.app/mcp: restarts and lost sessions behind it are hidden from the supervisor; connect to the URL directly: "url": "https://mcp.linear.app/mcp" (a --header goes in "headers", its OAuth in "auth": {})',
        'servers.local.command: runs mcp-remote, a stdio bridge to http://127.0.0.1:3001/mcp: restarts and lost sessions behind it are hidden from the supervisor; connect to the URL directly: "url": "http://127.0.0.1:3001/mcp" (a --header goes in "headers", its OAuth in "auth": {})',
      ]);
    }
  });
});

function caught(run: () => unknown): ConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('no ConfigError');
}

describe('an unclosed ${', () => {
  it('is a ConfigError naming the file, the server and the field', async () => {
    const path = file('unclosed.json', {
      mcpServers: { docs: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer ${API_TOKEN' } } },
    });
    const error = await loadConfig(path, { env: { API_TOKEN: 'secret-value' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toContain(path);
    expect(message).toContain("servers.docs.headers.Authorization: '${API_TOKEN' has no closing '}'");
    expect(message).not.toContain('secret-value');
  });

  it('in an entry written in code is a warning', () => {
    const seen: ConfigWarning[] = [];
    parseServerConfig(
      'docs',
      { url: 'http://x/mcp', headers: { a: 'Bearer ${TOKEN' } },
      { onWarning: (w) => seen.push(w) },
    );
    expect(seen.map((w) => w.path)).toEqual(['servers.docs.headers.a']);
  });
});

describe('other hosts’ URL keys', () => {
  it('Windsurf serverUrl is `url` (auto), Gemini CLI httpUrl is `url` over Streamable HTTP; both expand variables', () => {
    const servers = fromMcpServersJson(
      {
        mcpServers: {
          windsurf: { serverUrl: 'https://${HOST}/mcp' },
          gemini: { httpUrl: 'https://${env:HOST}/mcp', headers: { a: 'b' } },
          legacy: { serverUrl: 'https://h/sse' },
        },
      },
      { env: { HOST: 'mcp.example.com' } },
    );
    expect(parseServerConfig('windsurf', servers.windsurf)).toMatchObject({
      type: 'auto',
      url: new URL('https://mcp.example.com/mcp'),
    });
    expect(parseServerConfig('gemini', servers.gemini)).toMatchObject({
      type: 'http',
      url: new URL('https://mcp.example.com/mcp'),
    });
    expect(parseServerConfig('legacy', servers.legacy)).toMatchObject({ type: 'sse' });
    expect(parseServerConfig('code', { httpUrl: 'http://x/mcp', type: 'auto' })).toMatchObject({ type: 'auto' });
  });

  it('two URL keys at once name both', () => {
    expect(() => parseServerConfig('x', { url: 'http://a/mcp', serverUrl: 'http://b/mcp' })).toThrow(
      /servers\.x: has `url` and `serverUrl`: give one URL/,
    );
  });
});
