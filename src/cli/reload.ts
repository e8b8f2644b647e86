/**
 * A restart of `serve --http` that never refuses a connection: the listening socket outlives the
 * process. Under systemd, socket activation holds it (`LISTEN_FDS`: the unit's socket is fd 3);
 * elsewhere, `serve --reload` on SIGHUP starts its successor with the same command line, hands it
 * the socket (fd 3), waits until it listens, then drains. Meanwhile new connections wait in the
 * socket's backlog instead of being refused, which the official Python SDK's client cannot survive.
 */
import { spawn } from 'node:child_process';

/** sd_listen_fds(3): the first inherited socket. */
const LISTEN_FDS_START = 3;

/**
 * The socket systemd (or a predecessor) passed to this process, if any; the variables are removed
 * so that the servers this process starts (stdio children) do not take them for theirs.
 */
export function inheritedSocket(env: NodeJS.ProcessEnv = process.env, pid = process.pid): number | undefined {
  const count = Number(env['LISTEN_FDS']);
  const forPid = env['LISTEN_PID'];
  delete env['LISTEN_FDS'];
  delete env['LISTEN_PID'];
  delete env['LISTEN_FDNAMES'];
  if (!(Number.isInteger(count) && count >= 1)) return undefined;
  if (forPid !== undefined && Number(forPid) !== pid) return undefined;
  return LISTEN_FDS_START;
}

/** Tells the predecessor that spawned this process (if any) that it listens now. */
export function toldListening(): void {
  if (!process.send) return;
  process.send({ event: 'listening' }, () => process.disconnect());
}

/**
 * Starts this command again with the listening socket `fd` and resolves once the successor
 * listens; rejects (this process keeps serving) when it exits or is not listening in `timeoutMs`.
 */
export function startSuccessor(fd: number, timeoutMs = 60_000): Promise<number> {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    env: { ...process.env, LISTEN_FDS: '1' },
    stdio: ['ignore', 'inherit', 'inherit', fd, 'ipc'],
    detached: true,
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`the new process did not listen within ${timeoutMs} ms`));
    }, timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`the new process exited (${code}) before it listened`)));
    child.once('message', () => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.unref();
      resolve(child.pid!);
    });
  });
}
