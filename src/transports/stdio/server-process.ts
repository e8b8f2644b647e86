/**
 * The server's child process: starting it, and stopping it as the spec says (close stdin, wait,
 * SIGTERM, wait, SIGKILL), always to the whole process group so that `npx`/`uvx` grandchildren
 * go too. What the process says, and what its end means for the connection, is stdio.ts.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { StdioShutdownConfig } from '../../config/server-config.js';
import { SpawnError, describeError } from '../../core/errors.js';
import { signalTree, SPAWN_DETACHED, treeAlive, untrackTree, waitTreeGone } from './process-tree.js';
import { stdioEnvironment } from './environment.js';

export type ServerProcess = ChildProcessByStdio<Writable, Readable, Readable>;

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** What the server is started as. */
export interface ServerCommand {
  server: string;
  command: string;
  args: readonly string[];
  /** Added to the safe inherited environment (see environment.ts). */
  env: Record<string, string>;
  cwd: string | undefined;
}

/** Bound on waiting for the exit after SIGKILL (the kernel does it; this only guards against a hang). */
const KILL_WAIT_MS = 2_000;

/** Spawns the command without a shell, as a group leader where there are groups; throws what spawn throws. */
export function spawnServerProcess({ command, args, cwd, env }: ServerCommand): ServerProcess {
  return spawn(command, [...args], {
    cwd,
    env: stdioEnvironment(env),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: SPAWN_DETACHED,
    shell: false,
    windowsHide: true,
  });
}

/** Why the command could not start, with a hint for the usual causes; fatal until the server has connected once. */
export function spawnError(error: unknown, { server, command, cwd }: ServerCommand, fatal: boolean): SpawnError {
  const errno = (error as NodeJS.ErrnoException | undefined)?.code;
  const where = cwd ?? process.cwd();
  const hint =
    errno === 'ENOENT'
      ? ' (the command was not found on PATH, or the cwd does not exist)'
      : errno === 'EACCES'
        ? ' (permission denied)'
        : '';
  const reason = describeError(error);
  return new SpawnError(`cannot start the server command '${command}' in ${where}: ${reason}${hint}`, command, errno, {
    server,
    cause: error,
    fatal,
  });
}

/** Ends a process that still runs: close stdin, wait, SIGTERM, wait, SIGKILL. `waitExit(ms)` is true once it exited. */
export async function endServerProcess(
  child: ServerProcess,
  shutdown: StdioShutdownConfig,
  waitExit: (ms: number) => Promise<boolean>,
): Promise<void> {
  const { closeStdinTimeoutMs, sigtermTimeoutMs } = shutdown;
  child.stdin.end();
  if (await waitExit(closeStdinTimeoutMs)) return;
  signalProcess(child, 'SIGTERM');
  if (await waitExit(sigtermTimeoutMs)) return;
  signalProcess(child, 'SIGKILL');
  await waitExit(KILL_WAIT_MS);
}

/** The direct child is gone; grandchildren left in its group get SIGTERM, then SIGKILL. */
export async function reapProcessGroup(pid: number | undefined, sigtermTimeoutMs: number): Promise<void> {
  if (pid === undefined) return;
  try {
    if (
      SPAWN_DETACHED &&
      treeAlive(pid) &&
      signalTree(pid, 'SIGTERM') &&
      !(await waitTreeGone(pid, sigtermTimeoutMs))
    ) {
      signalTree(pid, 'SIGKILL');
      await waitTreeGone(pid, KILL_WAIT_MS);
    }
  } catch {
    // EPERM and the like: nothing more this process can do
  } finally {
    untrackTree(pid);
  }
}

export function describeExit(exit: ExitStatus): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code ?? '?'}`;
}

function signalProcess(child: ServerProcess, signal: 'SIGTERM' | 'SIGKILL'): void {
  if (!child.pid) return;
  try {
    if (!signalTree(child.pid, signal)) child.kill(signal);
  } catch {
    child.kill(signal);
  }
}
