/**
 * The modern era's listener over Streamable HTTP, against servers built with the official v2
 * server package (modern-only and dual-era): `subscriptions/listen` stands for the GET stream and
 * `resources/subscribe`; list changes and resource updates arrive on the same events as in the
 * 2025 era, and the catalog refreshes. Also: an idle server that goes away is noticed by the
 * listener's refused reopen at once (both eras), not by the keepalive half a minute later.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSdkExampleServer, type SdkExampleServer } from '../../../servers/sdk-example-server.js';
import { createSupervisor, type ServerHandle, type Supervisor } from '../../../src/index.js';
import { CONFIG_URI, startV2Server, type V2Server } from './v2-server.js';

let server: V2Server | undefined;
let legacy: SdkExampleServer | undefined;
let supervisor: Supervisor | undefined;
afterEach(async () => {
  await supervisor?.stop().catch(() => {});
  await server?.close();
  await legacy?.close();
  supervisor = server = legacy = undefined;
});

const FAST_RESTART = { backoff: { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 } };
/** The listener's reconnect waits ~1 s (stream policy): polls allow for it. */
const SOON = { timeout: 8_000, interval: 50 };

async function supervise(url: string, protocolVersion?: string): Promise<ServerHandle> {
  supervisor = createSupervisor({
    servers: {
      v2: { url, keepalive: false, restart: FAST_RESTART, requestTimeoutMs: 5_000, protocolVersion },
    },
  });
  await supervisor.start();
  return supervisor.server('v2');
}

type Seen = V2Server['seen'][number];
const method = (r: Seen) => (r.body as { method?: string } | undefined)?.method;
const listens = (s: V2Server) => s.seen.filter((r) => method(r) === 'subscriptions/listen');
const filterOf = (r: Seen | undefined) => (r?.body as { params: { notifications: unknown } }).params.notifications;

describe.each(['modern', 'dual'] as const)('a %s v2 server over HTTP', (mode) => {
  it('gets a subscriptions/listen (no GET) for the list changes it offers; tools list_changed refreshes the catalog', async () => {
    server = await startV2Server(mode);
    const handle = await supervise(server.url);
    expect(handle.status()).toMatchObject({ state: 'ready', era: 'modern' });
    await expect.poll(() => listens(server!).length).toBe(1);
    const [listen] = listens(server);
    expect(listen?.headers).toMatchObject({
      'mcp-method': 'subscriptions/listen',
      'mcp-protocol-version': '2026-07-28',
    });
    expect(filterOf(listen)).toEqual({ toolsListChanged: true, resourcesListChanged: true });
    expect(server.seen.filter((r) => r.method !== 'POST')).toEqual([]);

    const catalog = supervisor!.catalog;
    const names = async () => (await catalog.list()).tools.map((t) => t.originalName);
    expect(await names()).toEqual(['echo', 'regional']);
    const changed = new Promise((resolve) => handle.on('listChanged', resolve));
    server.addTool('added');
    expect(await changed).toEqual({ list: 'tools' });
    await expect.poll(async () => (await names()).sort()).toEqual(['added', 'echo', 'regional']);
  });

  it('subscribeResource re-issues the listen with the URI (no resources/subscribe); updates arrive; unsubscribe drops it', async () => {
    server = await startV2Server(mode);
    const handle = await supervise(server.url);
    await expect.poll(() => listens(server!).length).toBe(1);
    const updates: unknown[] = [];
    handle.on('resourceUpdated', (u) => updates.push(u));

    await handle.subscribeResource(CONFIG_URI);
    expect(filterOf(listens(server).at(-1))).toEqual({
      toolsListChanged: true,
      resourcesListChanged: true,
      resourceSubscriptions: [CONFIG_URI],
    });
    expect(server.seen.map(method)).not.toContain('resources/subscribe');
    server.resourceUpdated(CONFIG_URI);
    await expect.poll(() => updates).toEqual([expect.objectContaining({ uri: CONFIG_URI })]);

    await handle.unsubscribeResource(CONFIG_URI);
    await expect
      .poll(() => filterOf(listens(server!).at(-1)))
      .toEqual({ toolsListChanged: true, resourcesListChanged: true });
    // Once the new listen is acknowledged, an update is not delivered; a tools change after it is.
    const changed = new Promise((resolve) => handle.on('listChanged', resolve));
    await expect.poll(() => handle.status().state).toBe('ready');
    server.resourceUpdated(CONFIG_URI);
    server.addTool('later');
    await changed;
    expect(updates).toHaveLength(1);
    expect(server.seen.map(method)).not.toContain('resources/unsubscribe');
  });

  it('a list change published while the listen is issued again is not lost (the old one stays until the new one is acknowledged)', async () => {
    server = await startV2Server(mode);
    const handle = await supervise(server.url);
    await expect.poll(() => listens(server!).length).toBe(1);
    const changes: unknown[] = [];
    handle.on('listChanged', (c) => changes.push(c));
    const subscribed = handle.subscribeResource(CONFIG_URI);
    server.addTool('meanwhile'); // the new listen is not even sent yet: only the old one can carry it
    await subscribed;
    await expect.poll(() => changes).toEqual([{ list: 'tools' }]);
  });

  it('a subscription outlives a restart of the server: the new listen carries it, updates arrive again', async () => {
    server = await startV2Server(mode);
    const port = Number(new URL(server.url).port);
    const handle = await supervise(server.url);
    await handle.subscribeResource(CONFIG_URI);
    const updates: unknown[] = [];
    handle.on('resourceUpdated', (u) => updates.push(u));
    await server.close();
    server = await startV2Server(mode, port, `v2-${mode}-restarted`);
    await expect.poll(() => listens(server!).length, SOON).toBeGreaterThan(0);
    expect(filterOf(listens(server).at(-1))).toMatchObject({ resourceSubscriptions: [CONFIG_URI] });
    await expect.poll(() => handle.status().state, SOON).toBe('ready');
    // The acknowledgment may still be on its way: publish until one update arrives.
    await expect
      .poll(() => {
        server!.resourceUpdated(CONFIG_URI);
        return updates.length;
      }, SOON)
      .toBeGreaterThan(0);
  });
});

describe('what a modern server does not offer', () => {
  it('no list changes and no subscriptions: no listen at all', async () => {
    server = await startV2Server('modern', 0, 'v2-plain', { listChanged: false, subscribe: false });
    const handle = await supervise(server.url);
    await handle.listTools(); // released once the listener settled
    expect(server.seen.map(method)).not.toContain('subscriptions/listen');
  });

  it('no resources.subscribe: subscribeResource rejects naming it, and the listen is not issued again', async () => {
    server = await startV2Server('modern', 0, 'v2-no-subscribe', { subscribe: false });
    const handle = await supervise(server.url);
    await expect.poll(() => listens(server!).length).toBe(1);
    await expect(handle.subscribeResource(CONFIG_URI)).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
      message: expect.stringMatching(/does not offer resources\.subscribe/),
    });
    await handle.listTools();
    expect(listens(server)).toHaveLength(1);
  });
});

describe('an idle server that goes away is noticed by the listener (no keepalive)', () => {
  it('modern: the refused re-listen moves the connection out of ready at once', async () => {
    server = await startV2Server('modern');
    const handle = await supervise(server.url);
    await expect.poll(() => listens(server!).length).toBe(1);
    await server.close();
    server = undefined;
    await expect.poll(() => handle.status().state, SOON).not.toBe('ready');
    expect(handle.status().lastError).toMatch(/server unreachable|could not be reopened|ECONNREFUSED/);
  });

  it('legacy: the refused GET reopen moves the connection out of ready at once', async () => {
    legacy = await startSdkExampleServer();
    const handle = await supervise(legacy.url, 'legacy');
    expect(handle.status()).toMatchObject({ state: 'ready', era: 'legacy' });
    // Requests are released once the listener's GET opened (ready.serving).
    await handle.listTools();
    await legacy.stop();
    await expect.poll(() => handle.status().state, SOON).not.toBe('ready');
    expect(handle.status().lastError).toMatch(/could not be reopened|ECONNREFUSED|unreachable/);
  });
});

describe('a 429 to subscriptions/listen', () => {
  it('is backpressure: the listen is sent again after its Retry-After, nothing reaches the server meanwhile, no restart', async () => {
    server = await startV2Server('modern');
    server.busyFor = { method: 'subscriptions/listen', times: 1, status: 429, retryAfter: '1' };
    const handle = await supervise(server.url);
    await expect.poll(() => listens(server!).length, SOON).toBe(2);
    const [refused, sent] = listens(server);
    expect(sent!.at! - refused!.at!, 'the window was waited out').toBeGreaterThanOrEqual(900);
    const between = server.seen.filter((r) => r.at! > refused!.at! && r.at! < sent!.at!);
    expect(between, 'nothing reached the server during the window').toEqual([]);
    expect(handle.status()).toMatchObject({ state: 'ready', restarts: 0, lastError: undefined });
    expect(handle.status().backpressure).toMatchObject({ held: 1 });
  });
});
