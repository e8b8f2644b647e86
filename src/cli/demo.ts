/**
 * The embedded default of `npm start` (`watch --demo`): local MCP servers over every transport,
 * and the faults `--chaos` injects into them. The servers are the modules in servers/ (they need
 * the dev dependencies, the official SDK among them), loaded at run time from the source checkout.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ServerConfigInput } from '../config/server-config.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import type { Fault } from './chaos.js';
import { startWorkload, type WorkloadRun } from './workload.js';
import { UsageError, type ServerMap } from './load-config.js';

export interface Demo {
  servers: ServerMap;
  /** The faults `--chaos` injects, in the order they are taken. */
  faults: (sup: Supervisor) => Fault[];
  /** Tool calls kept running under `--chaos` (answered and lost are shown). */
  workload: (sup: Supervisor, note: (text: string) => void) => WorkloadRun;
  close: () => Promise<void>;
}

/** Fast keepalive and restarts, so the table moves and heals within seconds. */
const TUNING = {
  requestTimeoutMs: 10_000,
  keepalive: { intervalMs: 2_000, timeoutMs: 2_000, maxMissed: 2 },
  restart: {
    maxRestarts: 1_000,
    withinMs: 60_000,
    provenAfterMs: 3_000,
    backoff: { initialMs: 200, maxMs: 3_000, factor: 2, jitter: 0.2 },
  },
} satisfies Partial<ServerConfigInput>;

interface Started {
  servers: ServerMap;
  faults: (sup: Supervisor) => Fault[];
  close: () => Promise<void>;
}

interface Candidate {
  start(): Promise<Started>;
}

// Shapes of the demo server modules (servers/), imported at run time only.
interface SdkFixtureModule {
  startSdkServer: (options: {
    stateful: boolean;
  }) => Promise<{ url: string; terminateAllSessions(): Promise<void>; close(): Promise<void> }>;
}
interface HttpFixtureModule {
  startHttpFixture: (options: { responseMode?: 'json' | 'sse' }) => Promise<{
    url: string;
    expireAllSessions(): void;
    closeGetStreams(): void;
    getStreamCount(): number;
    close(): Promise<void>;
  }>;
}
interface OAuthFixtureModule {
  startOAuthServer: (options?: {
    refreshTokens?: boolean;
  }) => Promise<{ mcpUrl: string; expireAccessTokens(): void; close(): Promise<void> }>;
  approveAtOnce: (authorizationUrl: URL, signal?: AbortSignal) => Promise<string>;
}
interface SdkExampleModule {
  startSdkExampleServer: () => Promise<{
    url: string;
    restart(): Promise<void>;
    stop(): Promise<void>;
    start(): Promise<void>;
    close(): Promise<void>;
  }>;
}
interface ModernFixtureModule {
  startModernFixture: (
    tools: Record<string, unknown>[],
    options?: { keepSeen?: number },
  ) => Promise<{ url: string; close(): Promise<void> }>;
}
interface LegacyFixtureModule {
  startLegacySseFixture: (
    settings?: object,
  ) => Promise<{ url: string; origin: string; streamCount(): number; closeStreams(): void; close(): Promise<void> }>;
}

const FIXTURES = new URL('../../servers/', import.meta.url);

function fixturePath(file: string): string {
  return fileURLToPath(new URL(file, FIXTURES));
}

async function importFixture<T>(file: string): Promise<T> {
  return (await import(new URL(file, FIXTURES).href)) as T;
}

const DEMO_REDIRECT_URI = 'http://127.0.0.1:9/callback';

function candidates(): Record<string, Candidate> {
  const stdioScript = fixturePath('stdio-server.mjs');
  return {
    // Written like the SDK's 2025 examples: after a restart it answers the old session with 400.
    'sdk-example': {
      async start() {
        const { startSdkExampleServer } = await importFixture<SdkExampleModule>('sdk-example-server.ts');
        const server = await startSdkExampleServer();
        return {
          servers: { 'sdk-example': { url: server.url, type: 'http', ...TUNING } },
          faults: () => [
            {
              name: 'restart-server',
              inject: async () => {
                await server.restart();
                return "sdk-example restarted: its old session gets 400 'No valid session ID provided' (re-initialize, replay)";
              },
            },
            {
              name: 'outage',
              inject: async () => {
                await server.stop();
                setTimeout(() => void server.start(), 1_500);
                return 'sdk-example is down for 1.5 s (reconnecting at once; calls wait and are answered when it is back)';
              },
            },
          ],
          close: () => server.close(),
        };
      },
    },
    'sdk-http': {
      async start() {
        const { startSdkServer } = await importFixture<SdkFixtureModule>('sdk-servers.ts');
        const server = await startSdkServer({ stateful: true });
        return {
          servers: { 'sdk-http': { url: server.url, type: 'http', ...TUNING } },
          faults: () => [
            {
              name: 'expire-sessions',
              inject: async () => {
                await server.terminateAllSessions();
                return 'sdk-http forgot every session (its next answer is 404: re-initialize, replay)';
              },
            },
          ],
          close: () => server.close(),
        };
      },
    },
    'fixture-http': {
      async start() {
        const { startHttpFixture } = await importFixture<HttpFixtureModule>('http-fixture.ts');
        const fixture = await startHttpFixture({ responseMode: 'sse' });
        return {
          servers: { 'fixture-http': { url: fixture.url, ...TUNING } },
          faults: () => [
            {
              name: 'close-idle-streams',
              inject: () => {
                if (fixture.getStreamCount() === 0) return undefined;
                fixture.closeGetStreams();
                return 'fixture-http closed its listening stream (the listener reopens it with Last-Event-ID; the connection stays ready)';
              },
            },
            {
              name: 'expire-sessions',
              inject: () => {
                fixture.expireAllSessions();
                return 'fixture-http expired every session (the next ping gets 404)';
              },
            },
          ],
          close: () => fixture.close(),
        };
      },
    },
    stdio: {
      async start() {
        return {
          servers: { stdio: { command: process.execPath, args: [stdioScript], ...TUNING } },
          faults: (sup) => [
            {
              name: 'kill-child',
              inject: () => {
                const pid = sup.server('stdio').status().pid;
                if (pid === undefined) return undefined;
                process.kill(pid, 'SIGKILL');
                return `killed the stdio server's process (pid ${pid})`;
              },
            },
          ],
          close: async () => {},
        };
      },
    },
    'oauth-http': {
      async start() {
        const { startOAuthServer, approveAtOnce } = await importFixture<OAuthFixtureModule>('oauth-server.ts');
        const fixture = await startOAuthServer({ refreshTokens: true });
        // The demo's user approves at once; the first 401 shows `authorizing`, then ready.
        const auth = { redirectUri: DEMO_REDIRECT_URI, onRedirect: approveAtOnce };
        return {
          servers: { 'oauth-http': { url: fixture.mcpUrl, type: 'http', auth, ...TUNING } },
          faults: () => [
            {
              name: 'expire-tokens',
              inject: () => {
                fixture.expireAccessTokens();
                return 'oauth-http expired every access token (the next ping gets 401: one refresh, no new sign-in)';
              },
            },
          ],
          close: () => fixture.close(),
        };
      },
    },
    // A 2026-07-28 server: stateless (server/discover, `_meta` on every request), no session to expire.
    modern: {
      async start() {
        const { startModernFixture } = await importFixture<ModernFixtureModule>('modern-fixture.ts');
        const echo = { name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } };
        const fixture = await startModernFixture([echo], { keepSeen: 0 });
        return {
          servers: { modern: { url: fixture.url, ...TUNING } },
          faults: () => [],
          close: () => fixture.close(),
        };
      },
    },
    'legacy-sse': {
      async start() {
        const { startLegacySseFixture } = await importFixture<LegacyFixtureModule>('legacy-sse-fixture.ts');
        const legacy = await startLegacySseFixture();
        return {
          // `legacy-auto` tries Streamable HTTP first, is refused (405) and falls back to SSE.
          servers: {
            'legacy-sse': { url: legacy.url, ...TUNING },
            'legacy-auto': { url: `${legacy.origin}/mcp`, type: 'auto', ...TUNING },
          },
          faults: () => [
            {
              name: 'close-idle-streams',
              inject: () => {
                if (legacy.streamCount() === 0) return undefined;
                legacy.closeStreams();
                return 'legacy-sse closed its SSE streams, as a proxy does with idle connections';
              },
            },
          ],
          close: () => legacy.close(),
        };
      },
    },
  };
}

/** Starts every demo server. */
export async function startDemo(): Promise<Demo> {
  if (!existsSync(fixturePath('sdk-servers.ts'))) {
    throw new UsageError(
      '--demo runs from a source checkout with dev dependencies (npm ci && npm start): its servers are the modules in servers/',
    );
  }
  const started: Started[] = [];
  try {
    for (const candidate of Object.values(candidates())) started.push(await candidate.start());
  } catch (error) {
    await Promise.allSettled(started.map((s) => s.close()));
    throw error;
  }
  return {
    servers: Object.assign({}, ...started.map((s) => s.servers)) as ServerMap,
    faults: (sup) => interleave(started.map((s) => s.faults(sup))),
    // A read-only tool (readOnlyHint): the calls a restart catches in flight are safe to replay.
    workload: (sup, note) => {
      const handle = sup.server('sdk-example');
      const known = handle.listTools();
      return startWorkload(
        sup,
        'sdk-example',
        (_, n) => known.then(() => handle.callTool('lookup', { key: `k${n % 10}` })),
        note,
      );
    },
    close: async () => {
      await Promise.allSettled(started.map((s) => s.close()));
    },
  };
}

/** One fault of each server in turn: [a1, b1, c1, a2, …]. */
function interleave<T>(lists: T[][]): T[] {
  const out: T[] = [];
  for (let i = 0; lists.some((list) => i < list.length); i++) {
    for (const list of lists) if (i < list.length) out.push(list[i]!);
  }
  return out;
}
