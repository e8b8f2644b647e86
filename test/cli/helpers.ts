/**
 * Drives the CLI as a user would: a spawned process of the built CLI (`dist/src/cli/main.js` of the
 * package built once per run, test/package/build.ts) once a file has called `useBuiltCli()`, else
 * `node --import tsx src/cli/main.ts …`. `--demo` always runs from source: its servers are the
 * modules in servers/, which the package does not ship.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { builtPackage } from '../package/build.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = 'src/cli/main.ts';
let builtMain: string | undefined;

/** Spawns the built CLI from now on (compiling it with tsx at every spawn was most of these files' CPU). */
export async function useBuiltCli(): Promise<void> {
  builtMain ??= join(await builtPackage(), 'dist', 'src', 'cli', 'main.js');
}

export interface CliRun {
  child: ChildProcess;
  /** Every stdout line so far. */
  lines: string[];
  stderr(): string;
  stdout(): string;
  /** Resolves with the first stdout line (seen or still to come) matching; rejects on exit or timeout. */
  waitForLine(match: RegExp | ((line: string) => boolean), timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

/** tsx's loader by path, so the CLI also runs in a folder of its own (`cwd`). */
const TSX_LOADER = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

let stores: string | undefined;
/**
 * A store file of its own for a run that names none: the CLI's default (~/.mcp-supervisor/store.json)
 * would be the user's, and era verdicts learned of one test's server would meet the next one on its port.
 */
function freshStore(args: readonly string[], env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (args.includes('--store') || env['MCP_SUPERVISOR_STORE'] !== undefined) return {};
  if (stores === undefined) {
    const dir = (stores = mkdtempSync(join(tmpdir(), 'mcp-supervisor-cli-store-')));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return { MCP_SUPERVISOR_STORE: join(stores, `${randomBytes(6).toString('hex')}.json`) };
}

export function spawnCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, cwd = ROOT): CliRun {
  const main =
    builtMain !== undefined && !args.includes('--demo') ? [builtMain] : ['--import', TSX_LOADER, join(ROOT, MAIN)];
  const child = spawn(process.execPath, [...main, ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: '', ...freshStore(args, env), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let out = '';
  let partial = '';
  let err = '';
  const waiters = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    const parts = (partial + chunk).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    for (const wake of waiters) wake();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((resolve) =>
    child.once('close', (code) => {
      for (const wake of waiters) wake();
      resolve(code);
    }),
  );
  let closed = false;
  void exited.then(() => (closed = true));
  return {
    child,
    lines,
    stderr: () => err,
    stdout: () => out,
    exited,
    waitForLine(match, timeoutMs = 15_000) {
      const test = typeof match === 'function' ? match : (line: string) => match.test(line);
      return new Promise((resolve, reject) => {
        let checked = 0;
        const timer = setTimeout(
          () =>
            finish(
              new Error(
                `no stdout line matching ${String(match)} within ${timeoutMs} ms; stdout:\n${out}\nstderr:\n${err}`,
              ),
            ),
          timeoutMs,
        );
        const finish = (error?: Error, line?: string) => {
          clearTimeout(timer);
          waiters.delete(check);
          if (error) reject(error);
          else resolve(line!);
        };
        const check = () => {
          for (; checked < lines.length; checked++) if (test(lines[checked]!)) return finish(undefined, lines[checked]);
          if (closed || child.exitCode !== null)
            finish(
              new Error(
                `the CLI exited (${child.exitCode}) before a line matching ${String(match)}; stdout:\n${out}\nstderr:\n${err}`,
              ),
            );
        };
        waiters.add(check);
        check();
      });
    },
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion. */
export async function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}, cwd = ROOT): Promise<CliResult> {
  const run = spawnCli(args, env, cwd);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A minimal WebSocket client (text frames from the server only): collects every message. */
export async function collectWebSocket(url: string): Promise<{ messages: string[]; close(): void }> {
  const { hostname, port } = new URL(url);
  const [socket, head] = await new Promise<[Socket, Buffer]>((resolve, reject) => {
    const req = request({
      host: hostname,
      port,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': randomBytes(16).toString('base64'),
      },
    });
    // Frames sent right after the handshake may arrive with it, in `head`.
    req.once('upgrade', (_res, upgraded, first: Buffer) => resolve([upgraded, first]));
    req.once('response', (res) => reject(new Error(`no upgrade: HTTP ${res.statusCode}`)));
    req.once('error', reject);
    req.end();
  });
  const messages: string[] = [];
  let buffer = Buffer.alloc(0);
  const receive = (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      if (buffer.length < 2) return;
      const opcode = buffer[0]! & 0x0f;
      let length = buffer[1]! & 0x7f;
      let offset = 2;
      if (length === 126) {
        if (buffer.length < 4) return;
        length = buffer.readUInt16BE(2);
        offset = 4;
      } else if (length === 127) {
        if (buffer.length < 10) return;
        length = Number(buffer.readBigUInt64BE(2));
        offset = 10;
      }
      if (buffer.length < offset + length) return;
      if (opcode === 1) messages.push(buffer.subarray(offset, offset + length).toString('utf8'));
      buffer = buffer.subarray(offset + length);
    }
  };
  receive(head);
  socket.on('data', receive);
  socket.on('error', () => {});
  return { messages, close: () => socket.destroy() };
}
