/**
 * Every code block in the user docs is checked: ```ts blocks are type-checked against the sources
 * (as `mcp-supervisor`, through tsconfig paths), and those marked `<!-- runnable -->` run against
 * server-everything started here (the docs' `127.0.0.1:3001` is its address), ```json config files are loaded with
 * `parseConfigText`, and each `--flag` of an `mcp-supervisor` command in a ```sh block is one the
 * CLI's help lists; docs/gateway.md's host configurations start a gateway (as this checkout's CLI)
 * that a host's SDK client lists tools through. The examples/ are run by test/adapters/package.test.ts.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, describe, expect, it } from 'vitest';
import { parseJsonText } from '../../src/config/json-text.js';
import { parseConfigText } from '../../src/index.js';
import { startEverythingServer } from '../../servers/everything-server.js';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const OUT = join(ROOT, '.docs-check');
/** README.md and every guide in docs/. */
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];
/** Import specifiers of the package, as the sources they are built from. */
const ENTRY_POINTS: Record<string, string> = {
  'mcp-supervisor': 'src/index.ts',
  'mcp-supervisor/auth': 'src/auth/index.ts',
  'mcp-supervisor/machines': 'machines/index.ts',
  'mcp-supervisor/sdk': 'src/adapters/sdk/index.ts',
  'mcp-supervisor/ai-sdk': 'src/adapters/ai-sdk/index.ts',
  'mcp-supervisor/langchain': 'src/adapters/langchain/index.ts',
  'mcp-supervisor/openai-agents': 'src/adapters/openai-agents/index.ts',
};
/** The reference server's address in the docs; runnable blocks get the one the test started. */
const REFERENCE_URL = 'http://127.0.0.1:3001/mcp';

interface Block {
  doc: string;
  line: number;
  lang: string;
  code: string;
  /** Marked `<!-- runnable -->` on the line before: run against server-everything. */
  runnable: boolean;
}

function blocksOf(doc: string): Block[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  const blocks: Block[] = [];
  const fence = /^```(\w*)\n([\s\S]*?)^```$/gm;
  for (const match of text.matchAll(fence)) {
    const before = text.slice(0, match.index);
    const line = before.split('\n').length;
    const runnable = /<!-- runnable -->\n$/.test(before);
    blocks.push({ doc, line, lang: match[1]!, code: match[2]!, runnable });
  }
  return blocks;
}

const blocks = DOCS.flatMap(blocksOf);
afterAll(() => rmSync(OUT, { recursive: true, force: true }));

describe('code blocks in the docs', () => {
  it('every ```ts block type-checks against the package', async () => {
    const ts = blocks.filter((block) => block.lang === 'ts');
    expect(ts.length).toBeGreaterThan(15);
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(OUT);
    const names = ts.map((block, index) => {
      const name = `${block.doc.replace(/[/.]/g, '_')}_${block.line}_${index}.ts`;
      // Each block is its own module: top-level await allowed, names do not clash.
      writeFileSync(join(OUT, name), `${block.code}\nexport {};\n`);
      return name;
    });
    writeFileSync(
      join(OUT, 'tsconfig.json'),
      JSON.stringify({
        extends: '../tsconfig.json',
        compilerOptions: {
          noEmit: true,
          rootDir: '..',
          noUnusedLocals: false,
          paths: Object.fromEntries(Object.entries(ENTRY_POINTS).map(([name, path]) => [name, [`../${path}`]])),
        },
        include: ['*.ts'],
      }),
    );
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const output = await exec(process.execPath, [tsc, '-p', join(OUT, 'tsconfig.json')], { cwd: ROOT }).then(
      () => '',
      (error: Error & { stdout?: string }) => error.stdout ?? error.message,
    );
    // Name the doc and its line for each error, not the generated file.
    const located = output.replace(
      /\.docs-check\/(\S+?)_(\d+)_\d+\.ts\((\d+),/g,
      (_, doc: string, line: string, at: string) => {
        const index = names.findIndex((name) => name.startsWith(`${doc}_${line}_`));
        return `${ts[index]?.doc ?? doc}:${Number(line) + Number(at)} (`;
      },
    );
    expect(located).toBe('');
  }, 180_000);

  it('every ```ts block marked runnable runs against server-everything, in one process', async () => {
    const runnable = blocks.filter((block) => block.lang === 'ts' && block.runnable);
    expect(runnable.length).toBeGreaterThanOrEqual(5);
    const dir = join(ROOT, '.docs-run');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    const everything = await startEverythingServer('streamableHttp');
    try {
      const files = runnable.map((block, index) => {
        const name = `${index}.ts`;
        const code = block.code
          .replaceAll(REFERENCE_URL, everything.url)
          .replace(/from '(mcp-supervisor[^']*)'/g, (whole, specifier: string) =>
            ENTRY_POINTS[specifier] ? `from '../${ENTRY_POINTS[specifier].replace(/\.ts$/, '.js')}'` : whole,
          );
        writeFileSync(join(dir, name), `${code}\nexport {};\n`);
        return { name, where: `${block.doc}:${block.line}` };
      });
      // Each block in turn; the first that throws is named with its doc and line.
      writeFileSync(
        join(dir, 'run.ts'),
        `for (const { name, where } of ${JSON.stringify(files)}) {
  try { await import(\`./\${name}\`); } catch (error) { console.error(\`FAILED \${where}:\`, error); process.exit(1); }
  console.log(\`RAN \${where}\`);
}
`,
      );
      const { stdout } = await exec(process.execPath, ['--import', 'tsx', join(dir, 'run.ts')], {
        cwd: ROOT,
        timeout: 120_000,
      }).catch((error: Error & { stdout?: string; stderr?: string }) => {
        throw new Error(`${error.stdout ?? ''}${error.stderr ?? error.message}`);
      });
      for (const { where } of files) expect(stdout).toContain(`RAN ${where}`);
    } finally {
      await everything.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('every ```json block with servers loads as a config file', () => {
    const json = blocks.filter((block) => block.lang === 'json' && /"(mcpServers|servers)"/.test(block.code));
    expect(json.length).toBeGreaterThan(0);
    for (const block of json) {
      const where = `${block.doc}:${block.line}`;
      const loaded = parseConfigText(block.code, {
        file: where,
        env: { DOCS_TOKEN: 't', GITHUB_TOKEN: 't', MCP_SUPERVISOR_TOKEN: 't' },
        strict: true,
      });
      expect(Object.keys(loaded.servers).length, where).toBeGreaterThan(0);
    }
  });

  it("docs/gateway.md's host configurations start a gateway that serves server-everything's tools", async () => {
    const hosts = blocks.filter((block) => block.doc === 'docs/gateway.md');
    // Every way a host is told to start `serve`: the JSON(C) entries' command and args, Claude Code's `claude mcp add … --`.
    const launches = [
      ...hosts
        .filter((block) => (block.lang === 'json' || block.lang === 'jsonc') && /"mcp-supervisor"/.test(block.code))
        .flatMap((block) => {
          const text = block.code.replace(/^\s*\/\/.*$/gm, '');
          const config = parseJsonText(text) as {
            mcpServers?: Record<string, unknown>;
            servers?: Record<string, unknown>;
          };
          return Object.values(config.mcpServers ?? config.servers ?? {})
            .filter(
              (entry): entry is { command: string; args: string[] } =>
                typeof (entry as { command?: unknown }).command === 'string',
            )
            .map((entry) => ({ where: `${block.doc}:${block.line}`, words: [entry.command, ...entry.args] }));
        }),
      ...hosts
        .filter((block) => block.lang === 'sh')
        .flatMap((block) => block.code.split('\n').map((line) => ({ block, line })))
        .filter(({ line }) => /^claude mcp add \S+ -- /.test(line))
        .map(({ block, line }) => ({
          where: `${block.doc}:${block.line}`,
          words: line.split(' -- ')[1]!.split(/\s+/),
        })),
    ];
    expect(launches.length).toBeGreaterThanOrEqual(4);
    const dir = mkdtempSync(join(tmpdir(), 'docs-hosts-'));
    const everything = await startEverythingServer('streamableHttp');
    try {
      const servers = join(dir, 'servers.json');
      writeFileSync(servers, JSON.stringify({ mcpServers: { everything: { url: everything.url } } }));
      for (const { where, words } of launches) {
        // npx must fetch the gateway's peer too (`serve` needs @modelcontextprotocol/server), or name the installed command.
        if (words[0] === 'npx')
          expect(words.slice(0, words.indexOf('serve')), where).toEqual([
            'npx',
            '-y',
            '-p',
            'mcp-supervisor',
            '-p',
            '@modelcontextprotocol/server',
            'mcp-supervisor',
          ]);
        else expect(words[0], where).toBe('mcp-supervisor');
        // The command as this checkout runs it, the rest as written (its config path pointed at the test's file).
        const rest = words.slice(words.indexOf('serve')).map((word) => (/servers\.json$/.test(word) ? servers : word));
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: ['--import', 'tsx', 'src/cli/main.ts', ...rest, '--store', join(dir, 'store.json')],
          cwd: ROOT,
          stderr: 'pipe',
        });
        const client = new Client({ name: 'docs-host', version: '1.0.0' });
        await client.connect(transport);
        try {
          const names = (await client.listTools()).tools.map((tool) => tool.name);
          expect(names, where).toContain('everything__echo');
        } finally {
          await client.close();
        }
      }
    } finally {
      await everything.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);

  it('every --flag of an mcp-supervisor command in a ```sh block is one the CLI knows', async () => {
    const { stdout: help } = await exec(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', '--help'], {
      cwd: ROOT,
    });
    const commands = blocks
      .filter((block) => block.lang === 'sh')
      .flatMap((block) => block.code.split('\n').map((line) => ({ block, line })))
      .filter(({ line }) => /^\s*(npx )?mcp-supervisor /.test(line));
    expect(commands.length).toBeGreaterThan(5);
    for (const { block, line } of commands) {
      const command = line.split('#')[0]!.split(' -- ')[0]!;
      for (const flag of command.match(/\s--?[a-z][\w-]*/g) ?? [])
        expect(help, `${block.doc}:${block.line}: ${flag.trim()}`).toContain(flag.trim());
    }
  }, 60_000);
});
