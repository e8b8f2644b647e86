/**
 * What a user gets from the registry: `npm pack` (which builds dist/ through `prepack`), the
 * tarball installed into an empty project with the ordinary client, then used there as a user
 * would: the bin through `npx`, the ESM import of each subpath export, and the types under tsc.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPX = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const QUIET = ['--no-audit', '--no-fund', '--loglevel=error'];

let project: string;
let tarball: string;
let packed: { filename: string; files: { path: string }[] };

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), 'mcp-supervisor-consumer-'));
  const { stdout } = await exec(NPM, ['pack', '--json', '--pack-destination', project, ...QUIET], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  // `prepack` prints the build's output before the JSON.
  [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as [typeof packed];
  tarball = join(project, packed.filename);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  await exec(NPM, ['install', tarball, '--prefer-offline', ...QUIET], { cwd: project });
}, 240_000);

afterAll(() => rmSync(project, { recursive: true, force: true }));

describe('the packed tarball, installed into an empty project', () => {
  it('holds the built code, types, README, LICENSE and CHANGELOG, and no sources or tests', () => {
    const files = packed.files.map((file) => file.path);
    for (const expected of [
      'LICENSE',
      'README.md',
      'CHANGELOG.md',
      'package.json',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/cli/main.js',
      'dist/machines/index.js',
      'dist/src/auth/index.d.ts',
    ])
      expect(files).toContain(expected);
    expect(files.filter((file) => /^(src|test|servers|bench)\//.test(file))).toEqual([]);
  });

  it('installs only what the library needs: no MCP server SDK (only `serve` uses it), no `prepare` in the manifest', () => {
    const installed = (name: string) => existsSync(join(project, 'node_modules', name, 'package.json'));
    for (const name of ['xstate', 'undici', 'eventsource-parser', 'zod']) expect(installed(name), name).toBe(true);
    expect(installed('@modelcontextprotocol/server')).toBe(false);
    expect(installed('@modelcontextprotocol/core')).toBe(false);
    const manifest = JSON.parse(
      readFileSync(join(project, 'node_modules', 'mcp-supervisor', 'package.json'), 'utf8'),
    ) as {
      scripts: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    // npm 11 warns about an install script on every install; a git install still builds through the repository's own.
    expect(manifest.scripts.prepare).toBeUndefined();
    expect(manifest.peerDependenciesMeta['@modelcontextprotocol/server']).toEqual({ optional: true });
    // Packing left the repository's manifest as it was.
    expect(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.prepare).toBe('npm run -s build');
  });

  it('`serve` without the MCP server SDK names the package to install; every other command runs', async () => {
    const serve = await exec(NPX, ['--no-install', 'mcp-supervisor', 'serve', '--url', 'http://127.0.0.1:9/mcp'], {
      cwd: project,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: Error & { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
    );
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain('npm install @modelcontextprotocol/server');
    const status = await exec(NPX, ['--no-install', 'mcp-supervisor', 'diagram', 'connection'], { cwd: project });
    expect(status.stdout).toContain('stateDiagram');
  }, 60_000);

  it('`npx mcp-supervisor --help` runs the bin', async () => {
    const { stdout } = await exec(NPX, ['--no-install', 'mcp-supervisor', '--help'], { cwd: project });
    expect(stdout).toMatch(/^mcp-supervisor \d+\.\d+\.\d+: supervised, self-healing MCP client connections/);
    const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const printed = await exec(NPX, ['--no-install', 'mcp-supervisor', '--version'], { cwd: project });
    expect(printed.stdout.trim()).toBe(version.version);
  }, 60_000);

  it.each([
    ['mcp-supervisor', ['createSupervisor', 'connect', 'loadConfig', 'ConfigError']],
    ['mcp-supervisor/machines', ['connectionMachine', 'supervisorMachine']],
    ['mcp-supervisor/auth', ['createOAuthProvider', 'discover']],
    ['mcp-supervisor/sdk', ['supervisedTransport']],
  ])(
    '`import … from %s` works',
    async (specifier, names) => {
      const script = `const m = await import(${JSON.stringify(specifier)}); console.log(JSON.stringify(Object.keys(m)));`;
      const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], { cwd: project });
      expect(JSON.parse(stdout)).toEqual(expect.arrayContaining(names));
    },
    60_000,
  );

  it('the types check under tsc (nodenext, strict) for every subpath', async () => {
    writeFileSync(
      join(project, 'consumer.ts'),
      `import { createSupervisor, loadConfig, type ServerStatus, type ApplyResult } from 'mcp-supervisor';
import { connectionMachine } from 'mcp-supervisor/machines';
import { createPkce } from 'mcp-supervisor/auth';
import { supervisedTransport } from 'mcp-supervisor/sdk';
export async function run(file: string): Promise<[ServerStatus['state'], ApplyResult, string, string, boolean]> {
  const sup = createSupervisor(await loadConfig(file));
  const result = await sup.apply(await loadConfig(file));
  const pkce = createPkce();
  const transport = supervisedTransport({ url: 'http://127.0.0.1:3000/mcp' });
  return [sup.status()['docs']!.state, result, connectionMachine.id, pkce.challenge, transport.sessionId === undefined];
}
`,
    );
    const options = [
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
    ];
    const typeRoots = ['--typeRoots', join(ROOT, 'node_modules', '@types'), '--types', 'node'];
    const checked = await exec(process.execPath, [TSC, ...options, ...typeRoots, 'consumer.ts'], { cwd: project }).then(
      () => '',
      (error: Error & { stdout?: string }) => error.stdout ?? error.message,
    );
    expect(checked).toBe('');
  }, 180_000);
});
