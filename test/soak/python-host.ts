/**
 * The official Python SDK (`mcp` 2.3.0, what Python agents run) as a host of the gateway: a
 * virtual environment made once in .tmp/python-mcp from the wheels in ../shared/wheels/python-mcp
 * (PyPI is not reachable here; see the README there), and python/http_host.py spawned in it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../cli/helpers.js';

const VENV = join(ROOT, '.tmp', 'python-mcp');
/** Beside the checkout (../shared), or beside its parent (a worktree in ../wt/<name>). */
const WHEELS = [
  process.env['MCP_PYTHON_WHEELS'],
  join(ROOT, '..', 'shared', 'wheels', 'python-mcp'),
  join(ROOT, '..', '..', 'shared', 'wheels', 'python-mcp'),
];

/** The venv's python, made (and `mcp` installed from the wheels) when missing. */
export function pythonWithMcp(): string {
  const python = join(VENV, 'bin', 'python');
  if (existsSync(python)) {
    try {
      execFileSync(python, ['-c', 'import mcp, httpx2'], { stdio: 'ignore' });
      return python;
    } catch {
      // half made: made again below
    }
  }
  const wheels = WHEELS.find((dir) => dir !== undefined && existsSync(dir));
  if (!wheels)
    throw new Error(`no Python wheels for mcp 2.3.0 (set MCP_PYTHON_WHEELS): looked in ${WHEELS.join(', ')}`);
  execFileSync('python3', ['-m', 'venv', '--clear', VENV], { stdio: 'ignore' });
  execFileSync(python, ['-m', 'pip', 'install', '-q', '--no-index', '--find-links', wheels, 'mcp==2.3.0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return python;
}

export interface HostLine {
  event?: 'ready' | 'mark' | 'died' | 'done';
  i?: number;
  ok?: boolean;
  error?: string;
  session_ids?: number;
}

export interface PythonHost {
  child: ChildProcess;
  lines: HostLine[];
  stderr(): string;
  /** Resolves once a line matching `match` was printed (seen or to come). */
  until(match: (line: HostLine) => boolean, timeoutMs?: number): Promise<HostLine>;
  /** Writes a line to the host's stdin (`mark`, `stop`). */
  say(word: 'mark' | 'stop'): void;
  /** Stops the host and resolves with its last line (`done`). */
  stop(): Promise<HostLine>;
}

/** A Python host calling `tool` every `intervalMs` on the gateway at `url`. */
export function startPythonHost(
  url: string,
  options: { token?: string; tool?: string; intervalMs?: number; retries?: number } = {},
): PythonHost {
  const args = [join(ROOT, 'test/soak/python/http_host.py'), url, '--interval-ms', String(options.intervalMs ?? 100)];
  if (options.token) args.push('--token', options.token);
  if (options.tool) args.push('--tool', options.tool);
  if (options.retries) args.push('--retries', String(options.retries));
  const child = spawn(pythonWithMcp(), args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: HostLine[] = [];
  const waiters = new Set<() => void>();
  let buffer = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    let cut: number;
    while ((cut = buffer.indexOf('\n')) >= 0) {
      const text = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 1);
      if (text.trim()) lines.push(JSON.parse(text) as HostLine);
    }
    for (const wake of waiters) wake();
  });
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const until = (match: (line: HostLine) => boolean, timeoutMs = 60_000) =>
    new Promise<HostLine>((resolve, reject) => {
      const check = () => {
        const found = lines.find(match);
        if (!found) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`the Python host printed no such line in ${timeoutMs} ms; stderr: ${stderr.slice(-2000)}`));
      }, timeoutMs);
      waiters.add(check);
      void exited.then(() => setTimeout(check, 0));
      check();
    });
  return {
    child,
    lines,
    stderr: () => stderr,
    until,
    say: (word) => void child.stdin.write(`${word}\n`),
    stop: async () => {
      if (child.exitCode === null) child.stdin.write('stop\n');
      const done = await until((line) => line.event === 'done');
      await exited;
      return done;
    },
  };
}
