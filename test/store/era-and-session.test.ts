/**
 * What a restarted process finds in the store (issue #26): the era verdict and, opt-in, the
 * 2025-era session. A second supervisor sharing the first one's memoryStore plays the restarted
 * process; the servers count what they were sent.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSupervisor, memoryStore, type Store, type Supervisor } from '../../src/index.js';
import { parseServerConfig } from '../../src/config/server-config.js';
import { serverIdentity } from '../../src/runtime/stored/server-identity.js';
import { stateKeys } from '../../src/store/state-keys.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { startModernFixture, type ModernFixture } from '../../servers/modern-fixture.js';
import { quickRestart } from '../integration/helpers.js';
import { FIXTURE as STDIO_FIXTURE } from '../transports/stdio/helpers.js';

let legacy: HttpFixture;
let modern: ModernFixture;
beforeAll(async () => {
  [legacy, modern] = await Promise.all([
    startHttpFixture(),
    startModernFixture([{ name: 'echo', inputSchema: { type: 'object' } }]),
  ]);
});
afterAll(async () => {
  await Promise.all([legacy.close(), modern.close()]);
});

const running: Supervisor[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((sup) => sup.stop().catch(() => {})));
});

const fast = { keepalive: false as const, restart: quickRestart(5), revive: { initialMs: 10, maxMs: 20 } };

async function supervise(
  url: string,
  store: Store | undefined,
  extra: Record<string, unknown> = {},
): Promise<Supervisor> {
  const sup = createSupervisor({ servers: { s: { url, ...fast, ...extra } }, ...(store ? { store } : {}) });
  running.push(sup);
  await sup.start();
  return sup;
}

const sent = (fixture: HttpFixture, method: string) => fixture.requests.filter((r) => r.rpcMethod === method).length;
const eraKey = (url: string) => stateKeys.era(serverIdentity(parseServerConfig('any', { url })));

describe('the era verdict', () => {
  it('a known 2025-era server is initialized at once by the restarted process: no server/discover', async () => {
    legacy.requests.length = 0;
    const store = memoryStore();
    const first = await supervise(legacy.url, store);
    expect(sent(legacy, 'server/discover')).toBe(1);
    await first.stop();
    const verdict = await store.get<{ era: string; learnedAt: number }>(eraKey(legacy.url));
    expect(verdict?.value.era).toBe('legacy');

    // Another name for the same URL: the verdict is the server's, not the name's.
    const sup = createSupervisor({ servers: { other: { url: legacy.url, ...fast } }, store });
    running.push(sup);
    await sup.start();
    expect(sup.status().other?.state).toBe('ready');
    expect(sent(legacy, 'server/discover')).toBe(1);
    expect(sent(legacy, 'initialize')).toBe(2);
    expect((await sup.server('other').callTool('echo', { text: 'hi' })).content).toBeDefined();
  });

  it('without a store nothing is kept: every process probes', async () => {
    legacy.requests.length = 0;
    await (await supervise(legacy.url, undefined)).stop();
    await supervise(legacy.url, undefined);
    expect(sent(legacy, 'server/discover')).toBe(2);
  });

  it('a verdict older than eraVerdictMaxAgeMs is not trusted: the server is probed and the verdict renewed', async () => {
    legacy.requests.length = 0;
    const store = memoryStore();
    const learnedAt = Date.now() - 2 * 86_400_000;
    await store.set(eraKey(legacy.url), { era: 'legacy', protocolVersion: '2025-11-25', learnedAt });
    await supervise(legacy.url, store);
    expect(sent(legacy, 'server/discover')).toBe(1);
    await expect
      .poll(async () => (await store.get<{ learnedAt: number }>(eraKey(legacy.url)))?.value.learnedAt)
      .toBeGreaterThan(learnedAt);
  });

  it('eraVerdictMaxAgeMs: 0 never trusts a stored verdict', async () => {
    legacy.requests.length = 0;
    const store = memoryStore();
    await store.set(eraKey(legacy.url), { era: 'legacy', protocolVersion: '2025-11-25', learnedAt: Date.now() });
    await supervise(legacy.url, store, { eraVerdictMaxAgeMs: 0 });
    expect(sent(legacy, 'server/discover')).toBe(1);
  });

  it('a wrong verdict (2025 era for a modern-only server) is dropped and the era probed again', async () => {
    modern.seen.length = 0;
    const store = memoryStore();
    await store.set(eraKey(modern.url), { era: 'legacy', protocolVersion: '2025-11-25', learnedAt: Date.now() });
    const sup = await supervise(modern.url, store);
    await expect.poll(() => sup.status().s?.state).toBe('ready');
    expect(sup.status().s?.protocolVersion).toBe('2026-07-28');
    expect(modern.posts('initialize').length).toBeGreaterThanOrEqual(1);
    expect(modern.posts('server/discover')).toHaveLength(1);
    await expect.poll(async () => (await store.get<{ era: string }>(eraKey(modern.url)))?.value.era).toBe('modern');
    expect((await sup.server('s').callTool('echo', { a: 1 })).isError).toBeFalsy();
  });

  it('a store that fails is one warning; the server is probed as without a store', async () => {
    legacy.requests.length = 0;
    const broken = memoryStore();
    const failing: Store = {
      ...broken,
      name: 'broken',
      get: () => Promise.reject(new Error('down')),
      set: () => Promise.reject(new Error('down')),
    };
    const sup = createSupervisor({ servers: { s: { url: legacy.url, ...fast } }, store: failing });
    running.push(sup);
    const warnings: Error[] = [];
    sup.server('s').on('warning', (error) => warnings.push(error));
    await sup.start();
    expect(sup.status().s?.state).toBe('ready');
    expect(sent(legacy, 'server/discover')).toBe(1);
    await expect.poll(() => warnings.length).toBeGreaterThan(0);
    expect(warnings[0]).toMatchObject({ code: 'STORE_UNAVAILABLE', server: 's' });
    expect(warnings.length).toBe(1);
  });
});

describe('resumeSession: the 2025-era session kept in the store', () => {
  const sessionKey = (url: string) => stateKeys.session(serverIdentity(parseServerConfig('any', { url })));

  it('is taken up by the restarted process and checked with one ping: no new initialize', async () => {
    legacy.requests.length = 0;
    const store = memoryStore();
    await (await supervise(legacy.url, store, { resumeSession: true })).stop();
    expect(legacy.requests.filter((r) => r.method === 'DELETE')).toHaveLength(0); // left open for the next process
    const kept = await store.get<{ sessionId: string }>(sessionKey(legacy.url));
    expect(legacy.sessions.has(kept!.value.sessionId)).toBe(true);

    const sup = await supervise(legacy.url, store, { resumeSession: true });
    expect(sup.status().s?.state).toBe('ready');
    expect(sent(legacy, 'initialize')).toBe(1);
    const pings = legacy.requests.filter((r) => r.rpcMethod === 'ping');
    expect(pings).toHaveLength(1);
    expect(pings[0]!.headers['mcp-session-id']).toBe(kept!.value.sessionId);
    const call = legacy.requests.length;
    await sup.server('s').callTool('echo', { text: 'hi' });
    expect(legacy.requests[call]!.headers['mcp-session-id']).toBe(kept!.value.sessionId);
    expect(JSON.stringify(sup.status())).not.toContain(kept!.value.sessionId);
    expect(sup.status().s?.protocolVersion).toBe('2025-11-25');
  });

  it('is initialized again when the server answers the ping with 404 (the session is gone)', async () => {
    legacy.requests.length = 0;
    const store = memoryStore();
    await (await supervise(legacy.url, store, { resumeSession: true })).stop();
    const before = (await store.get<{ sessionId: string }>(sessionKey(legacy.url)))!.value.sessionId;
    legacy.expireAllSessions();
    const sup = await supervise(legacy.url, store, { resumeSession: true });
    expect(sup.status().s?.state).toBe('ready');
    expect(sent(legacy, 'ping')).toBe(1);
    expect(sent(legacy, 'initialize')).toBe(2);
    await expect
      .poll(async () => (await store.get<{ sessionId: string }>(sessionKey(legacy.url)))?.value.sessionId)
      .not.toBe(before);
    await sup.server('s').callTool('echo', { text: 'hi' });
  });

  it('a damaged stored session never reaches a header: a new initialize replaces it', async () => {
    legacy.requests.length = 0;
    const store = memoryStore();
    const session = {
      era: 'legacy',
      protocolVersion: '2025-11-25',
      serverInfo: { name: 'x', version: '1' },
      capabilities: {},
    };
    await store.set(sessionKey(legacy.url), { sessionId: 'bad\r\ninjected: 1', session, savedAt: Date.now() });
    const sup = await supervise(legacy.url, store, { resumeSession: true });
    expect(sup.status().s?.state).toBe('ready');
    expect(sent(legacy, 'ping')).toBe(0);
    expect(sent(legacy, 'initialize')).toBe(1);
    await expect
      .poll(async () => (await store.get<{ sessionId: string }>(sessionKey(legacy.url)))?.value.sessionId)
      .toMatch(/^[\x21-\x7e]+$/);
  });

  it('is off by default: nothing kept, the session ended on stop', async () => {
    legacy.requests.length = 0;
    const store = memoryStore();
    await (await supervise(legacy.url, store)).stop();
    expect(await store.get(sessionKey(legacy.url))).toBeUndefined();
    expect(legacy.requests.filter((r) => r.method === 'DELETE')).toHaveLength(1);
  });
});

describe('config validation of the stored-state options', () => {
  it.each([
    [{ url: 'http://127.0.0.1:1/mcp', eraVerdictMaxAgeMs: -1 }, 'servers.s.eraVerdictMaxAgeMs'],
    [{ url: 'http://127.0.0.1:1/mcp', eraVerdictMaxAgeMs: 'soon' }, 'servers.s.eraVerdictMaxAgeMs'],
    [{ url: 'http://127.0.0.1:1/mcp', resumeSession: 'yes' }, 'servers.s.resumeSession'],
    [{ command: 'node', resumeSession: true }, 'servers.s.resumeSession'],
    [{ url: 'http://127.0.0.1:1/sse', resumeSession: true }, 'servers.s.resumeSession'],
    [{ url: 'http://127.0.0.1:1/mcp', protocolVersion: 'modern', resumeSession: true }, 'servers.s.resumeSession'],
  ])('%j is a ConfigError naming %s', (config, path) => {
    let error: unknown;
    try {
      parseServerConfig('s', config);
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'CONFIG_ERROR' });
    expect((error as { issues: { path: string }[] }).issues.map((issue) => issue.path)).toContain(path);
  });
});

describe('the store read beside the opening', () => {
  it('asks the store for the era verdict while a stdio server process is still being started, not after', async () => {
    const inner = memoryStore();
    const pidsAtRead: Array<number | undefined> = [];
    const watched: { sup?: Supervisor } = {};
    const store: Store = {
      name: 'watched memory',
      get: (key) => {
        if (key.includes(':era:')) pidsAtRead.push(watched.sup?.server('s').status().pid);
        return inner.get(key);
      },
      set: (key, value, options) => inner.set(key, value, options),
      delete: (key, options) => inner.delete(key, options),
      lock: (name, options) => inner.lock(name, options),
    };
    const sup = (watched.sup = createSupervisor({
      servers: { s: { command: process.execPath, args: [STDIO_FIXTURE], ...fast } },
      store,
    }));
    running.push(sup);
    await sup.start();
    expect(sup.status().s?.state).toBe('ready');
    // The read was asked for before the process was up (no pid yet): its answer comes beside the spawn.
    expect(pidsAtRead).toEqual([undefined]);
  });
});
