/**
 * Signalling a child together with everything it started. On POSIX the child is spawned
 * `detached`, so it leads its own process group and `kill(-pid)` reaches `npx`/`uvx`
 * grandchildren too. Windows has no signals: `taskkill /T` ends the tree (untested here).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const isWindows = process.platform === 'win32';
const POLL_MS = 20;

/** Whether the child is spawned as a group leader (POSIX) so its whole tree can be signalled. */
export const SPAWN_DETACHED = !isWindows;

/** Sends `signal` to the process group led by `pid`; false when the group is already gone. */
export function signalTree(pid: number, signal: 'SIGTERM' | 'SIGKILL'): boolean {
  if (isWindows) return taskkill(pid, signal === 'SIGKILL');
  try {
    process.kill(-pid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/** True while some process of the group led by `pid` still runs (zombies waiting for a reaper do not count). */
export function treeAlive(pid: number): boolean {
  if (isWindows) return false; // the tree was ended with taskkill /T; nothing cheap to ask
  try {
    process.kill(-pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return process.platform === 'linux' ? groupHasLiveMember(pid) : true;
}

/** Resolves true once the group is gone, false when `timeoutMs` passed first. */
export async function waitTreeGone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (treeAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return true;
}

/**
 * Orphaned grandchildren are reaped by init, sometimes late; a zombie still answers kill(0).
 * Linux tells the states apart in /proc: only members that are not zombies count.
 */
function groupHasLiveMember(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return true;
  }
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    const stat = readStat(entry);
    if (stat && stat.pgrp === pgid && stat.state !== 'Z' && stat.state !== 'X') return true;
  }
  return false;
}

/** State and process group from /proc/<pid>/stat (the command name may hold spaces and parentheses). */
export function readStat(pid: number | string): { state: string; pgrp: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', pgrp: Number(fields[2]) };
}

function taskkill(pid: number, force: boolean): boolean {
  const args = force ? ['/T', '/F', '/PID', String(pid)] : ['/T', '/PID', String(pid)];
  const child = spawn('taskkill', args, { stdio: 'ignore', windowsHide: true });
  child.on('error', () => {});
  return true;
}

// ---- a last resort when this process exits with servers still running

const liveTrees = new Set<number>();
let exitHookInstalled = false;

/** Remembers a running tree so that it is signalled if this process exits without closing it. */
export function trackTree(pid: number): void {
  liveTrees.add(pid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const tree of liveTrees) {
      try {
        signalTree(tree, 'SIGTERM');
      } catch {
        // exiting anyway
      }
    }
  });
}

export function untrackTree(pid: number): void {
  liveTrees.delete(pid);
}
