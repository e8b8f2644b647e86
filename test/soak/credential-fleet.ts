/**
 * Shared by the shared-credential soak tests and bench/store.ts: the rotating OAuth server, a
 * fleet of worker processes (credential-worker.ts) on one store, and what they reported.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startOAuthServer, type OAuthFixture } from '../../servers/oauth-server.js';

// Compiled (bench: .bench-build/) the worker is JavaScript; from the sources it runs under tsx.
const COMPILED = import.meta.url.endsWith('.js');
const WORKER = fileURLToPath(new URL(COMPILED ? './credential-worker.js' : './credential-worker.ts', import.meta.url));

/** Access tokens live 1.5 s; a refresh token works once, and its reuse revokes the whole grant. */
export function startRotatingServer(accessTokenMs = 1_500): Promise<OAuthFixture> {
  return startOAuthServer({ refreshTokens: true, revokeOnReuse: true, accessTokenMs });
}

export interface WorkerReport {
  ok: number;
  failed: number;
  errors: string[];
  warnings: string[];
  /** Tool call latencies in this process: a call that waited for a fresh token shows in p99 and max. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface Worker {
  readonly child: ChildProcess;
  readonly ready: Promise<{ readyMs: number }>;
  readonly done: Promise<WorkerReport | undefined>;
  /** A refresh left this process for the token endpoint at `at` (epoch ms). */
  onRefreshing(listener: (at: number) => void): void;
  stop(): void;
}

export function startWorker(env: { MCP_URL: string; STORE: string; DURATION_MS: number; PAUSE_MS?: number }): Worker {
  const child = fork(WORKER, [], {
    execArgv: COMPILED ? [] : ['--import', 'tsx'],
    env: {
      ...process.env,
      MCP_URL: env.MCP_URL,
      STORE: env.STORE,
      DURATION_MS: String(env.DURATION_MS),
      PAUSE_MS: String(env.PAUSE_MS ?? 50),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const refreshing = new Set<(at: number) => void>();
  let report: WorkerReport | undefined;
  const ready = new Promise<{ readyMs: number }>((resolve, reject) => {
    child.on('message', (message: { type: string; readyMs?: number; at?: number } & WorkerReport) => {
      if (message.type === 'ready') resolve({ readyMs: message.readyMs! });
      if (message.type === 'refreshing') for (const listener of refreshing) listener(message.at!);
      if (message.type === 'done') report = message;
    });
    child.on('exit', (code) => reject(new Error(`worker ${child.pid} exited (${code}) before it was ready`)));
  });
  ready.catch(() => undefined);
  const done = new Promise<WorkerReport | undefined>((resolve) => child.on('exit', () => resolve(report)));
  return {
    child,
    ready,
    done,
    onRefreshing: (listener) => refreshing.add(listener),
    stop: () => child.connected && child.send({ type: 'stop' }),
  };
}

/** Expiries in a run: how many refreshes a fleet that shares its credential needs, whatever its size. */
export function expiriesIn(runMs: number, accessTokenMs: number, marginMs = 400): number {
  return Math.ceil(runMs / (accessTokenMs - marginMs));
}
