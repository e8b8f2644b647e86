/**
 * The CLI's first-hour features, in-process against a server this file starts: `tools` as a
 * table, `call`'s progress on stderr, `--input` and the prompt for `${input:…}`, the project
 * config file found without --config, `watch --json` (NDJSON).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCall, runTools, type CommandIo } from '../../src/cli/commands.js';
import { configFiles, discoverConfig } from '../../src/cli/config-discovery.js';
import { completeInputs, parseInputFlags, referencedInputs } from '../../src/cli/inputs.js';
import { loadServers } from '../../src/cli/load-config.js';
import { watch } from '../../src/cli/watch.js';
import { createSupervisor } from '../../src/index.js';
import { startSdkServer, type SdkServer } from '../../servers/sdk-servers.js';

let sdk: SdkServer;
const dir = mkdtempSync(join(tmpdir(), 'mcp-supervisor-cli-first-hour-'));
beforeAll(async () => {
  sdk = await startSdkServer({ stateful: true });
});
afterAll(async () => {
  await sdk.close();
  rmSync(dir, { recursive: true, force: true });
});

function capture(): CommandIo & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    out: (text: string) => void (io.stdout += text),
    err: (text: string) => void (io.stderr += text),
  };
  return io;
}

describe('tools', () => {
  it('prints a table: name, arguments (* required), description; --json the tools/list result', async () => {
    const io = capture();
    expect(await runTools({ sdk: { url: sdk.url } }, [], 5_000, io)).toBe(0);
    const lines = io.stdout.split('\n');
    expect(lines[0]).toMatch(/^TOOL +ARGUMENTS +DESCRIPTION$/);
    expect(lines.find((line) => line.startsWith('countdown'))).toMatch(
      /^countdown +steps\*: number, everyMs\*: number +Sends `steps` progress notifications/,
    );
    expect(io.stdout).toContain('* required');
    const json = capture();
    expect(await runTools({ sdk: { url: sdk.url } }, [], 5_000, json, true)).toBe(0);
    expect((JSON.parse(json.stdout) as { tools: unknown[] }).tools.length).toBeGreaterThan(1);
  });
});

describe('call', () => {
  it('shows each progress notification on stderr while the result goes to stdout', async () => {
    const io = capture();
    expect(await runCall({ sdk: { url: sdk.url } }, ['countdown', '{"steps":2,"everyMs":1}'], 5_000, io)).toBe(0);
    expect(io.stderr).toBe('progress countdown: 1/2 (50%) step 1\nprogress countdown: 2/2 (100%) step 2\n');
    expect(io.stdout).toContain('done after 2');
  });
});

describe('${input:…}', () => {
  const file = join(dir, 'vscode.json');
  writeFileSync(
    file,
    JSON.stringify({
      inputs: [
        { id: 'token', type: 'promptString', description: 'API token', password: true },
        { id: 'region', type: 'promptString' },
      ],
      servers: {
        api: {
          url: 'http://127.0.0.1:9/mcp',
          headers: { Authorization: 'Bearer ${input:token}', 'X-Region': '${input:region}' },
        },
      },
    }),
  );

  it('--input id=value fills them', () => {
    const inputs = parseInputFlags(['token=t0k=en', 'region=eu']);
    expect(inputs).toEqual({ token: 't0k=en', region: 'eu' });
    const servers = loadServers({ configs: [file], args: [], headers: [], inputs, warn: () => {} });
    expect(servers.api).toMatchObject({ headers: { Authorization: 'Bearer t0k=en', 'X-Region': 'eu' } });
    expect(() => parseInputFlags(['token'])).toThrow(/expected id=value/);
  });

  it('a missing one names the --input flag', () => {
    expect(() => loadServers({ configs: [file], args: [], headers: [], warn: () => {} })).toThrow(
      /--input token=value/,
    );
  });

  it('on a terminal, the missing ones are asked for, a password masked', async () => {
    expect(referencedInputs([file])).toEqual([
      { id: 'token', description: 'API token', password: true },
      { id: 'region', description: undefined, password: false },
    ]);
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
    const asked = completeInputs([file], { region: 'eu' }, { input, output }, true);
    setImmediate(() => input.write('s3cret\n'));
    expect(await asked).toEqual({ region: 'eu', token: 's3cret' });
    expect(shown).toContain('API token (token): ');
    expect(shown).not.toContain('s3cret');
    // Without a terminal nothing is asked.
    expect(await completeInputs([file], {}, { input, output })).toEqual({});
  });
});

describe('config discovery', () => {
  it('takes the first of .mcp.json, .cursor/mcp.json, .vscode/mcp.json and says which', () => {
    const folder = join(dir, 'project');
    mkdirSync(join(folder, '.cursor'), { recursive: true });
    mkdirSync(join(folder, '.vscode'), { recursive: true });
    expect(discoverConfig(folder)).toBeUndefined();
    writeFileSync(join(folder, '.vscode/mcp.json'), '{}');
    expect(discoverConfig(folder)).toBe('./.vscode/mcp.json');
    writeFileSync(join(folder, '.cursor/mcp.json'), '{}');
    expect(discoverConfig(folder)).toBe('./.cursor/mcp.json');
    writeFileSync(join(folder, '.mcp.json'), '{}');
    expect(discoverConfig(folder)).toBe('./.mcp.json');
    const said: string[] = [];
    expect(configFiles({ url: 'http://x/mcp' }, (line) => said.push(line))).toEqual([]);
    expect(configFiles({ config: ['a.json'] }, (line) => said.push(line))).toEqual(['a.json']);
    expect(said).toEqual([]);
  });
});

describe('watch --json', () => {
  it('prints one JSON object per event, and with --once the status', async () => {
    const sup = createSupervisor({ servers: { sdk: { url: sdk.url } } });
    const out = new PassThrough();
    let text = '';
    out.on('data', (chunk: Buffer) => (text += chunk.toString()));
    const code = await watch(sup, {
      json: true,
      once: true,
      notes: ['hello'],
      out: out as unknown as NodeJS.WriteStream,
      handleSignals: false,
    });
    expect(code).toBe(0);
    const events = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; to?: string });
    expect(events[0]).toMatchObject({ type: 'note', text: 'hello' });
    expect(events.filter((e) => e.type === 'transition').map((e) => e.to)).toContain('ready');
    // The status is the last line: the stop's own moves (ready -> closing -> closed) are not told after it.
    expect(events.at(-1)).toMatchObject({
      type: 'status',
      servers: { sdk: { state: 'ready' } },
    });
  });
});

describe('progress of a replayed call', () => {
  it('is marked replayed: the server started over', async () => {
    const sup = createSupervisor({ servers: { sdk: { url: sdk.url } } });
    try {
      await sup.start();
      const seen: { progress: number; replayed?: true }[] = [];
      let broke = false;
      const result = await sup.server('sdk').callTool(
        'countdown',
        { steps: 3, everyMs: 20 },
        {
          timeoutMs: 5_000,
          retry: 'always',
          onprogress: (progress) => {
            seen.push({ progress: progress.progress, ...(progress.replayed ? { replayed: true } : {}) });
            if (!broke) {
              broke = true; // the session ends mid-call: the outcome is unknown, `always` sends it again
              void sdk.terminateAllSessions();
            }
          },
        },
      );
      expect(result.content).toEqual([{ type: 'text', text: 'done after 3' }]);
      expect(seen[0]).toEqual({ progress: 1 });
      expect(seen.slice(1).filter((p) => p.replayed)).toEqual([
        { progress: 1, replayed: true },
        { progress: 2, replayed: true },
        { progress: 3, replayed: true },
      ]);
    } finally {
      await sup.stop();
    }
  });
});
