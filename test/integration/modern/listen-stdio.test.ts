/**
 * The modern era's listener over stdio, against servers built with the official v2 server
 * package (`serveStdio`, modern-only and dual-era): `subscriptions/listen` is a long-lived
 * request on the one channel; list changes and resource updates arrive on the same events as in
 * the 2025 era, subscribing issues the listen again, and a restarted process gets a new listen.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createSupervisor, type ServerHandle, type Supervisor } from '../../../src/index.js';

const SERVER = fileURLToPath(new URL('../../../servers/v2-stdio-server.mjs', import.meta.url));
const CONFIG_URI = 'file:///project/config.json';
const FAST_RESTART = { backoff: { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 } };
const SOON = { timeout: 8_000, interval: 50 };

let supervisor: Supervisor | undefined;
afterEach(async () => {
  await supervisor?.stop().catch(() => {});
  supervisor = undefined;
});

async function spawn(mode: 'modern' | 'dual'): Promise<ServerHandle> {
  supervisor = createSupervisor({
    servers: {
      local: {
        command: process.execPath,
        args: [SERVER, mode],
        keepalive: false,
        restart: FAST_RESTART,
        requestTimeoutMs: 10_000,
        shutdown: { closeStdinTimeoutMs: 200, sigtermTimeoutMs: 200 },
      },
    },
  });
  await supervisor.start();
  return supervisor.server('local');
}

/** The catalog's tool names, sorted (a refresh happens when the list is stale). */
async function catalogNames(): Promise<string[]> {
  return (await supervisor!.catalog.list()).tools.map((t) => t.originalName).sort();
}

describe.each(['modern', 'dual'] as const)('a %s v2 server over stdio', (mode) => {
  it('tools list_changed arrives on the listen and the catalog refreshes', async () => {
    const handle = await spawn(mode);
    expect(handle.status()).toMatchObject({ state: 'ready', era: 'modern', transport: 'stdio' });
    expect(await catalogNames()).toEqual(['add-tool', 'echo', 'exit', 'touch', 'wait']);
    const changes: unknown[] = [];
    handle.on('listChanged', (c) => changes.push(c));
    await handle.callTool('add-tool', { name: 'added' });
    await expect.poll(() => changes).toEqual([{ list: 'tools' }]);
    await expect.poll(catalogNames).toEqual(['add-tool', 'added', 'echo', 'exit', 'touch', 'wait']);
  });

  it('subscribeResource issues the listen again with the URI; updates arrive; unsubscribing stops them', async () => {
    const handle = await spawn(mode);
    const updates: unknown[] = [];
    handle.on('resourceUpdated', (u) => updates.push(u));
    await handle.callTool('touch', { uri: CONFIG_URI });
    await handle.subscribeResource(CONFIG_URI);
    expect(updates, 'not subscribed before').toEqual([]);
    await handle.callTool('touch', { uri: CONFIG_URI });
    await expect.poll(() => updates).toEqual([expect.objectContaining({ uri: CONFIG_URI })]);

    await handle.unsubscribeResource(CONFIG_URI);
    // The listen without it: a tools change arrives on it once it is acknowledged.
    const changes: unknown[] = [];
    handle.on('listChanged', (c) => changes.push(c));
    await expect
      .poll(async () => {
        await handle.callTool('add-tool', { name: `probe-${changes.length}-${Math.random()}` });
        return changes.length;
      }, SOON)
      .toBeGreaterThan(0);
    // One channel, in order: an update sent before the call's answer would be in by now.
    await handle.callTool('touch', { uri: CONFIG_URI });
    expect(updates).toHaveLength(1);
  });

  it('a restarted process gets a new listen: its list changes and the subscription work again', async () => {
    const handle = await spawn(mode);
    await handle.subscribeResource(CONFIG_URI);
    const firstPid = handle.status().pid;
    await handle.callTool('exit').catch(() => {});
    await expect.poll(() => handle.status().pid, SOON).not.toBe(firstPid);
    await expect.poll(() => handle.status().state, SOON).toBe('ready');
    const updates: unknown[] = [];
    handle.on('resourceUpdated', (u) => updates.push(u));
    const changes: unknown[] = [];
    handle.on('listChanged', (c) => changes.push(c));
    // The new listen may still be on its way: ask until both arrive.
    await expect
      .poll(async () => {
        await handle.callTool('touch', { uri: CONFIG_URI });
        await handle.callTool('add-tool', { name: `again-${Math.random()}` });
        return updates.length > 0 && changes.length > 0;
      }, SOON)
      .toBe(true);
  });

  it('a process killed while idle: the connection leaves ready at once', async () => {
    const handle = await spawn(mode);
    const pid = handle.status().pid!;
    const left = new Promise((resolve) => handle.on('transition', (t) => t.from === 'ready' && resolve(t)));
    process.kill(pid, 'SIGKILL');
    expect(await left).toMatchObject({ from: 'ready', to: 'reconnecting' });
  });
});
