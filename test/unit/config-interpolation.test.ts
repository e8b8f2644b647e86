/** `${VAR}`, `${VAR:-default}`, `${env:VAR}`, `${input:id}`, `${workspaceFolder}`, `${userHome}`, `envFile`. */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, fromMcpServersJson, loadConfig, parseServerConfig } from '../../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'mcp-supervisor-interp-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

const env = { TOKEN: 'tok-123456', HOST: 'mcp.example.com', EMPTY: '' };

describe('interpolation', () => {
  it('expands ${VAR}, ${env:VAR} and ${VAR:-default} in url, headers, command, args, env and cwd', () => {
    const servers = fromMcpServersJson(
      {
        mcpServers: {
          docs: {
            url: 'https://${HOST}/mcp',
            headers: { Authorization: 'Bearer ${TOKEN}', 'X-Region': '${REGION:-eu}', 'X-Empty': '${EMPTY:-none}' },
          },
          files: {
            command: '${env:HOST}-bin',
            args: ['--token=${env:TOKEN}', '${userHome}'],
            env: { API_KEY: '${TOKEN}' },
            cwd: '${workspaceFolder}/sub',
          },
        },
      },
      { env, workspaceFolder: '/ws' },
    );
    expect(servers.docs).toMatchObject({
      url: 'https://mcp.example.com/mcp',
      headers: { Authorization: 'Bearer tok-123456', 'X-Region': 'eu', 'X-Empty': 'none' },
    });
    expect(servers.files).toMatchObject({
      command: 'mcp.example.com-bin',
      args: ['--token=tok-123456', homedir()],
      env: { API_KEY: 'tok-123456' },
      cwd: '/ws/sub',
    });
  });

  it('a missing variable is a ConfigError naming the server, the field and the variable, never a value', () => {
    const error = configError(() =>
      fromMcpServersJson(
        { mcpServers: { docs: { url: 'https://h/mcp', headers: { Authorization: 'Bearer ${NOPE}' } } } },
        { env },
      ),
    );
    expect(error.issues[0]?.path).toBe('servers.docs.headers.Authorization');
    expect(error.message).toContain('NOPE is not set');
    expect(error.message).not.toContain('tok-123456');
  });

  it('${input:id} says how to supply it, and the `inputs` option supplies it', () => {
    const json = {
      inputs: [{ id: 'api-key', type: 'promptString', description: 'The docs API key', password: true }],
      servers: { docs: { type: 'http', url: 'https://h/mcp', headers: { 'X-Key': '${input:api-key}' } } },
    };
    const error = configError(() => fromMcpServersJson(json, { env }));
    expect(error.message).toContain('servers.docs.headers.X-Key');
    expect(error.message).toContain('"The docs API key"');
    expect(error.message).toContain('inputs');
    expect(fromMcpServersJson(json, { inputs: { 'api-key': 'k-999' } }).docs).toMatchObject({
      headers: { 'X-Key': 'k-999' },
    });
  });

  it('an unknown ${…} form is an error, not passed through', () => {
    const error = configError(() => fromMcpServersJson({ mcpServers: { a: { command: '${config:x}' } } }, { env }));
    expect(error.message).toMatch(/servers\.a\.command: \$\{config:x\} is not a variable/);
  });

  it('envFile is read with util.parseEnv, relative to the file; `env` wins', async () => {
    const vscode = join(dir, 'project', '.vscode');
    mkdirSync(vscode, { recursive: true });
    writeFileSync(join(dir, 'project', '.env'), '# comment\nAPI_KEY=from-file\nOTHER="quoted value"\n');
    const file = join(vscode, 'mcp.json');
    writeFileSync(
      file,
      JSON.stringify({
        servers: {
          a: { command: 'node', envFile: '${workspaceFolder}/.env', env: { OTHER: 'from-env' } },
          b: { command: 'node', envFile: '../.env' },
        },
      }),
    );
    const { servers } = await loadConfig(file, { env });
    expect(servers.a).toMatchObject({ env: { API_KEY: 'from-file', OTHER: 'from-env' } });
    expect(servers.b).toMatchObject({ env: { API_KEY: 'from-file', OTHER: 'quoted value' } });
    expect('envFile' in servers.a!).toBe(false);
  });

  it('a missing envFile names the file it looked for', () => {
    const error = configError(() =>
      fromMcpServersJson({ mcpServers: { a: { command: 'node', envFile: join(dir, 'none.env') } } }),
    );
    expect(error.message).toContain('servers.a.envFile: cannot read');
    expect(error.message).toContain('no such file');
  });

  it('expanded values become secrets of the parsed config; literal defaults and folders do not', () => {
    const servers = fromMcpServersJson(
      {
        mcpServers: { a: { url: 'https://${HOST}/mcp', headers: { 'X-Tenant': '${TOKEN}', 'X-R': '${R:-eu-west}' } } },
      },
      { env },
    );
    expect(parseServerConfig('a', servers.a).secrets).toEqual(['mcp.example.com', 'tok-123456']);
  });

  it('loadConfig names the file in every error', async () => {
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ mcpServers: { a: { url: '${MISSING_ONE}' }, b: { url: 'x' } } }));
    const error = await loadConfig(file, { env }).then(
      () => undefined,
      (e: unknown) => e as ConfigError,
    );
    if (!(error instanceof ConfigError)) throw new Error('expected a ConfigError');
    expect(error.file).toBe(file);
    expect(error.message).toContain(`${file}: servers.a.url: the environment variable MISSING_ONE is not set`);
    expect(error.message).toContain('servers.b.url');
  });
});
