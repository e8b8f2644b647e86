/**
 * The adapters as a consumer gets them: the package is built (once per run, test/package/build.ts) and copied into a folder of its own outside
 * the repository, whose node_modules hold only the core's dependencies (xstate, undici,
 * eventsource-parser, zod). There `mcp-supervisor` must import (the core never loads a
 * framework), and each adapter subpath must fail only for want of its framework. Then, with the
 * repository's node_modules, every subpath resolves through the `exports` map.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverythingServer } from '../../servers/everything-server.js';
import { builtPackage } from '../package/build.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The core's dependencies: the transport and machine stack, output-schema checks (ajv), the OpenTelemetry API, and DPoP proofs (jose). */
const CORE_DEPENDENCIES = [
  'xstate',
  'undici',
  'eventsource-parser',
  'zod',
  'ajv',
  'ajv-formats',
  '@opentelemetry/api',
  'jose',
  // The CLI's: the prompt for VS Code `${input:…}` values, and `doctor`'s command lookup.
  'read',
  'which',
  // fileStore's cross-process lock.
  'proper-lockfile',
  // The gateway's check of a 2026-07-28 host's envelope against the last one (ajv's own dependency too).
  'fast-deep-equal',
];
/** The examples docs/agents.md shows whole. */
const GUIDE_EXAMPLES = {
  'agent-ai-sdk.ts': /everything__get-sum -> .*The sum of 2 and 3 is 5\.[\s\S]*model: done/,
  'agent-langchain.ts': /everything__get-sum -> "The sum of 2 and 3 is 5\."/,
  'agent-openai-agents.ts': /the model saw: .*The sum of 2 and 3 is 5\.[\s\S]*model: done/,
};
/** Every file of examples/, what it prints, and the environment that makes it end by itself. */
const EXAMPLES: Record<string, { expected: RegExp; env?: Record<string, string> }> = {
  ...Object.fromEntries(Object.entries(GUIDE_EXAMPLES).map(([file, expected]) => [file, { expected }])),
  'long-running-agent.ts': {
    expected: /everything: \(start\) -> connecting[\s\S]*Echo: call 1\n[\s\S]*Echo: call 2\n/,
    env: { CALLS: '2' },
  },
  // It starts the repository's test authorization server (servers/), copied beside it.
  'fleet-workers.ts': {
    expected:
      /worker \d+: [1-9]\d* calls answered[\s\S]*the authorization server saw 1 sign-in\(s\), \d+ refreshes, 0 reuses, 0 revoked grants/,
    env: { WORKERS: '2', SECONDS: '2' },
  },
};
const ADAPTERS = {
  'mcp-supervisor/ai-sdk': { export: 'aiSdkTools', framework: 'ai' },
  'mcp-supervisor/langchain': { export: 'langChainTools', framework: '@langchain/core' },
  'mcp-supervisor/openai-agents': { export: 'openAiAgentsMcpServer', framework: '@openai/agents' },
};

let built: string;
let bare: string;

beforeAll(async () => {
  built = join(ROOT, '.package-test-adapters');
  rmSync(built, { recursive: true, force: true });
  mkdirSync(built, { recursive: true });
  cpSync(join(await builtPackage(), 'dist'), join(built, 'dist'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(built, 'package.json'));
  // A consumer with the core's dependencies only.
  bare = mkdtempSync(join(tmpdir(), 'mcp-supervisor-consumer-'));
  const modules = join(bare, 'node_modules');
  mkdirSync(modules);
  // A copy, not a link: Node would follow a link back into the repository and its node_modules.
  cpSync(built, join(modules, 'mcp-supervisor'), { recursive: true });
  for (const name of CORE_DEPENDENCIES) {
    mkdirSync(dirname(join(modules, name)), { recursive: true }); // a scope's folder (@opentelemetry)
    symlinkSync(join(ROOT, 'node_modules', name), join(modules, name), 'dir');
  }
  writeFileSync(join(bare, 'package.json'), JSON.stringify({ type: 'module' }));
}, 120_000);

afterAll(() => {
  rmSync(bare, { recursive: true, force: true });
});

async function importIn(cwd: string, specifier: string): Promise<string> {
  const script = `import(${JSON.stringify(specifier)}).then((m) => console.log(JSON.stringify(Object.keys(m).sort())), (e) => console.log('FAILED ' + e.code + ' ' + e.message))`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd });
  return stdout.trim();
}

describe('adapter subpaths', () => {
  it('the core imports without any framework installed', async () => {
    const keys = await importIn(bare, 'mcp-supervisor');
    expect(keys).not.toMatch(/^FAILED/);
    expect(JSON.parse(keys)).toContain('createSupervisor');
  });

  it.each(Object.entries(ADAPTERS))('%s fails only for want of its framework', async (specifier, { framework }) => {
    const outcome = await importIn(bare, specifier);
    expect(outcome).toMatch(/^FAILED ERR_MODULE_NOT_FOUND/);
    expect(outcome).toContain(`'${framework}'`);
  });

  it.each(Object.entries(ADAPTERS))('%s resolves through the exports map', async (specifier, { export: name }) => {
    const outcome = await importIn(built, specifier);
    expect(JSON.parse(outcome)).toContain(name);
  });

  it('mcp-supervisor/sdk imports with the core alone (it imports no SDK) and resolves through the exports map', async () => {
    for (const cwd of [bare, built])
      expect(JSON.parse(await importIn(cwd, 'mcp-supervisor/sdk'))).toContain('supervisedTransport');
    expect(JSON.parse(await importIn(built, 'mcp-supervisor/ai-sdk'))).toContain('supervisedMcpTransport');
  });

  it('declares each framework as an optional peer dependency', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    const clients = ['@modelcontextprotocol/sdk', '@modelcontextprotocol/client', '@ai-sdk/mcp'];
    for (const framework of [...Object.values(ADAPTERS).map((adapter) => adapter.framework), ...clients]) {
      expect(manifest.peerDependencies[framework]).toBeDefined();
      expect(manifest.peerDependenciesMeta[framework]?.optional).toBe(true);
    }
    expect(Object.keys(manifest.dependencies).sort()).toEqual([...CORE_DEPENDENCIES].sort());
  });
});

describe('the examples of docs/agents.md', () => {
  it('are in the guide as they are in examples/; every example is run below', () => {
    expect(Object.keys(EXAMPLES).sort()).toEqual(
      readdirSync(join(ROOT, 'examples'))
        .filter((f) => f.endsWith('.ts'))
        .sort(),
    );
    const guide = readFileSync(join(ROOT, 'docs', 'agents.md'), 'utf8');
    for (const file of Object.keys(GUIDE_EXAMPLES))
      expect(guide).toContain(readFileSync(join(ROOT, 'examples', file), 'utf8').trim());
  });

  it.each(Object.entries(EXAMPLES))(
    '%s runs against server-everything, importing the built package',
    async (file, { expected, env }) => {
      // In the built package's folder: `mcp-supervisor` is the package itself, the frameworks
      // come from the repository's node_modules.
      mkdirSync(join(built, 'examples'), { recursive: true });
      cpSync(join(ROOT, 'examples', file), join(built, 'examples', file));
      cpSync(join(ROOT, 'servers'), join(built, 'servers'), { recursive: true });
      const everything = await startEverythingServer('streamableHttp');
      try {
        const { stdout } = await run(process.execPath, ['--import', 'tsx', join('examples', file)], {
          cwd: built,
          env: { ...process.env, ...env, EVERYTHING_URL: everything.url },
          timeout: 60_000,
        });
        expect(stdout).toMatch(expected);
      } finally {
        await everything.close();
      }
    },
    90_000,
  );
});
