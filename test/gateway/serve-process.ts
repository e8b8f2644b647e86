/**
 * `mcp-supervisor serve --http` as operators run it: a child process of the CLI (from source,
 * through tsx), its stderr kept, killed the way a test needs (SIGKILL: a crash; SIGTERM: a drain).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from '../cli/helpers.js';

const TSX_LOADER = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;

export interface GatewayProcess {
  child: ChildProcess;
  /** http://127.0.0.1:port/mcp, once it listens. */
  url: string;
  stderr(): string;
  /** Resolves once stderr holds a match (already or later). */
  waitForStderr(match: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal: NodeJS.Signals): Promise<number | null>;
  exited: Promise<number | null>;
}

/** Starts `serve` with `args` (`--http` among them) and resolves once it listens. */
export async function startServe(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<GatewayProcess> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, join(ROOT, 'src/cli/main.ts'), 'serve', ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const wake of waiters) wake();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      for (const wake of waiters) wake();
      resolve(code);
    }),
  );
  const waitForStderr = (match: RegExp, timeoutMs = 30_000) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => finish(new Error(`no ${String(match)} on serve's stderr:\n${stderr}`)), timeoutMs);
      const finish = (error?: Error, found?: string) => {
        clearTimeout(timer);
        waiters.delete(check);
        if (error) reject(error);
        else resolve(found!);
      };
      const check = () => {
        const found = match.exec(stderr);
        if (found) return finish(undefined, found[0]);
        if (child.exitCode !== null || child.signalCode !== null)
          finish(new Error(`serve exited (${child.exitCode ?? child.signalCode}) before ${String(match)}:\n${stderr}`));
      };
      waiters.add(check);
      check();
    });
  // A text line or a JSON one (`--log-format json`).
  const listening = await waitForStderr(/listening on http:\/\/[^\s"]+/);
  return {
    child,
    url: listening.replace(/^listening on /, ''),
    stderr: () => stderr,
    waitForStderr,
    exited,
    kill: async (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
