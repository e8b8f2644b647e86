/**
 * The embedded default of `npm start` (`watch --demo`): local MCP servers over every transport
 * this build supports, and the faults `--chaos` injects into them. The servers are the test
 * fixtures (dev-only), loaded at run time from the source checkout; a transport the build
 * does not support yet (createSupervisor throws a ConfigError) is left out, so new transports
 * show up here as soon as they land.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ServerConfigInput } from '../config.js';
import { ConfigError } from '../protocol/errors.js';
import { createSupervisor, type Supervisor } from '../supervisor.js';
import type { Fault } from './chaos.js';
import { UsageError, type ServerMap } from './load-config.js';

export interface Demo {
  servers: ServerMap;
  /** Demo servers left out, with the reason (a transport this build lacks). */
  skipped: string[];
  /** The faults `--chaos` injects, in the order they are taken. */
  faults(sup: Supervisor): Fault[];
  close(): Promise<void>;
}

/** Fast keepalive and restarts, so the table moves and heals within seconds. */
const TUNING = {
  requestTimeoutMs: 10_000,
  keepalive: { intervalMs: 2_000, timeoutMs: 2_000, maxMissed: 2 },
  restart: { maxRestarts: 1_000, withinMs: 60_000, provenAfterMs: 3_000, backoff: { initialMs: 200, maxMs: 3_000, factor: 2, jitter: 0.2 } },
} satisfies Partial<ServerConfigInput>;

interface Started {
  servers: ServerMap;
  faults(sup: Supervisor): Fault[];
  close(): Promise<void>;
}

interface Candidate {
  /** What the servers need, for the support check (placeholder addresses). */
  probe: ServerMap;
  /** A file the candidate needs besides the fixtures (the stdio server script). */
  needs?: string;
  start(): Promise<Started>;
}

// Shapes of the fixture modules (test/fixtures), imported at run time only.
interface SdkFixtureModule {
  startSdkServer(options: { stateful: boolean }): Promise<{ url: string; terminateAllSessions(): Promise<void>; close(): Promise<void> }>;
}
interface HttpFixtureModule {
  startHttpFixture(options: { responseMode?: 'json' | 'sse' }): Promise<{ url: string; expireAllSessions(): void; closeGetStreams(): void; getStreamCount(): number; close(): Promise<void> }>;
}
interface OAuthFixtureModule {
  startOAuthServer(options?: { refreshTokens?: boolean }): Promise<{ mcpUrl: string; expireAccessTokens(): void; close(): Promise<void> }>;
  approveAtOnce(authorizationUrl: URL, signal?: AbortSignal): Promise<string>;
}
interface LegacyFixtureModule {
  startLegacySseFixture(settings?: object): Promise<{ url: string; origin: string; streamCount(): number; closeStreams(): void; close(): Promise<void> }>;
}

const FIXTURES = new URL('../../test/fixtures/', import.meta.url);

function fixturePath(file: string): string {
  return fileURLToPath(new URL(file, FIXTURES));
}

async function importFixture<T>(file: string): Promise<T> {
  return (await import(new URL(file, FIXTURES).href)) as T;
}

const PLACEHOLDER = 'http://127.0.0.1:9';
const DEMO_REDIRECT_URI = 'http://127.0.0.1:9/callback';

function candidates(): Record<string, Candidate> {
  const stdioScript = fixturePath('stdio-server.mjs');
  return {
    'sdk-http': {
      probe: { 'sdk-http': { url: `${PLACEHOLDER}/mcp`, type: 'http' } },
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
      probe: { 'fixture-http': { url: `${PLACEHOLDER}/mcp` } },
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
      probe: { stdio: { command: process.execPath, args: [stdioScript] } },
      needs: stdioScript,
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
      // The support check needs some onRedirect; it is never called.
      probe: { 'oauth-http': { url: `${PLACEHOLDER}/mcp`, type: 'http', auth: { redirectUri: DEMO_REDIRECT_URI, onRedirect: async () => DEMO_REDIRECT_URI } } },
      needs: fixturePath('oauth-server.ts'),
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
    'legacy-sse': {
      probe: { 'legacy-sse': { url: `${PLACEHOLDER}/sse` }, 'legacy-auto': { url: `${PLACEHOLDER}/mcp`, type: 'auto' } },
      needs: fixturePath('legacy-sse-fixture.ts'),
      async start() {
        const { startLegacySseFixture } = await importFixture<LegacyFixtureModule>('legacy-sse-fixture.ts');
        const legacy = await startLegacySseFixture();
        return {
          // `legacy-auto` tries Streamable HTTP first, is refused (405) and falls back to SSE.
          servers: { 'legacy-sse': { url: legacy.url, ...TUNING }, 'legacy-auto': { url: `${legacy.origin}/mcp`, type: 'auto', ...TUNING } },
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

/** Why this build cannot run `servers`, or undefined when it can. */
function unsupported(servers: ServerMap): string | undefined {
  try {
    createSupervisor({ servers });
    return undefined;
  } catch (error) {
    if (error instanceof ConfigError) return error.message.replace(/^invalid configuration: /, '');
    throw error;
  }
}

/** Starts every demo server whose transport this build supports. */
export async function startDemo(): Promise<Demo> {
  if (!existsSync(fixturePath('sdk-servers.ts'))) {
    throw new UsageError('--demo runs from a source checkout with dev dependencies (npm ci && npm start): its servers are the test fixtures in test/fixtures/');
  }
  const started: Started[] = [];
  const skipped: string[] = [];
  try {
    for (const [name, candidate] of Object.entries(candidates())) {
      const reason = candidate.needs && !existsSync(candidate.needs) ? `${candidate.needs} is missing` : unsupported(candidate.probe);
      if (reason !== undefined) {
        skipped.push(`${name}: ${reason}`);
        continue;
      }
      started.push(await candidate.start());
    }
  } catch (error) {
    await Promise.allSettled(started.map((s) => s.close()));
    throw error;
  }
  return {
    servers: Object.assign({}, ...started.map((s) => s.servers)) as ServerMap,
    skipped,
    faults: (sup) => interleave(started.map((s) => s.faults(sup))),
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
