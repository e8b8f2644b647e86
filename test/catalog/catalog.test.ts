/**
 * The tool catalog against real MCP servers built with the official SDK: names, filters, the
 * cache, and every refresh rule (list_changed, a restart with other tools, a server down at the
 * start that comes up, servers added and removed at run time), calls routed by exposed name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ConfigError,
  createSupervisor,
  RequestTimeoutError,
  UnknownToolError,
  type CatalogChange,
  type Supervisor,
} from '../../src/index.js';
import { quickRestart } from '../integration/helpers.js';
import { startToolServer, type ToolServer } from './tool-server.js';

const open: { stop(): Promise<void> }[] = [];
const servers: ToolServer[] = [];

afterEach(async () => {
  await Promise.all(open.splice(0).map((sup) => sup.stop()));
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function toolServer(...names: string[]): Promise<ToolServer> {
  const server = await startToolServer(names.map((name) => ({ name })));
  servers.push(server);
  return server;
}

const fast = { restart: quickRestart(50), revive: { initialMs: 10, maxMs: 20 }, keepalive: false as const };

function supervise(
  urls: Record<string, string>,
  catalog?: Parameters<typeof createSupervisor>[0]['catalog'],
): Supervisor {
  const sup = createSupervisor({
    servers: Object.fromEntries(Object.entries(urls).map(([name, url]) => [name, { url, ...fast }])),
    catalog,
  });
  open.push(sup);
  return sup;
}

/** Resolves with the next `changed` event that satisfies `predicate`. */
function nextChange(
  sup: Supervisor,
  predicate: (change: CatalogChange) => boolean = () => true,
): Promise<CatalogChange> {
  return new Promise((resolve) => {
    const off = sup.catalog.on('changed', (change) => {
      if (!predicate(change)) return;
      off();
      resolve(change);
    });
  });
}

describe('tool catalog', () => {
  it('names every tool of every server uniquely, and routes calls by exposed name', async () => {
    const alpha = await toolServer('search', 'read.file');
    const beta = await toolServer('search');
    const sup = supervise({ alpha: alpha.url, beta: beta.url });
    await sup.start();
    const { tools, missing } = await sup.tools();
    expect(missing).toEqual([]);
    expect(tools.map((tool) => [tool.name, tool.server, tool.originalName])).toEqual([
      ['alpha__read_file', 'alpha', 'read.file'],
      ['alpha__search', 'alpha', 'search'],
      ['beta__search', 'beta', 'search'],
    ]);
    expect(tools[0]!.inputSchema.type).toBe('object');
    const result = await sup.catalog.call('beta__search', { text: 'hi' });
    expect(result.content).toEqual([{ type: 'text', text: 'search: hi' }]);
    expect(beta.calls).toEqual(['search(hi)']);
    expect(alpha.calls).toEqual([]);
    await expect(sup.catalog.call('nope', {})).rejects.toBeInstanceOf(UnknownToolError);
  });

  it('without prefixes, collisions are resolved by server name; allow and deny filter per server', async () => {
    const alpha = await toolServer('search', 'get-env', 'get-sum');
    const beta = await toolServer('search', 'debug');
    const sup = supervise(
      { beta: beta.url, alpha: alpha.url },
      {
        prefix: false,
        servers: { alpha: { allow: [/^get-/, 'search'], deny: ['get-env'] }, beta: { deny: ['debug'] } },
      },
    );
    await sup.start();
    const { tools } = await sup.tools();
    expect(tools.map((tool) => `${tool.name}=${tool.server}.${tool.originalName}`)).toEqual([
      'get-sum=alpha.get-sum',
      'search=alpha.search',
      'search_2=beta.search',
    ]);
  });

  it('refuses bad catalog options when the supervisor is created', () => {
    expect(() => createSupervisor({ servers: {}, catalog: { separator: '::' } })).toThrow(ConfigError);
  });

  it('is cached: listing again asks no server', async () => {
    const alpha = await toolServer('one');
    const sup = supervise({ alpha: alpha.url });
    await sup.start();
    const first = await sup.tools();
    const second = await sup.tools();
    expect(second).toBe(first);
    expect(alpha.requests['tools/list']).toBe(1);
  });

  it('is refreshed on notifications/tools/list_changed, and says so', async () => {
    const alpha = await toolServer('one');
    const sup = supervise({ alpha: alpha.url });
    await sup.start();
    await sup.tools();
    const changed = nextChange(sup, () => sup.catalog.snapshot().tools.some((tool) => tool.originalName === 'two'));
    alpha.setTools([{ name: 'one' }, { name: 'two' }]);
    const change = await changed;
    expect(change.servers).toEqual(['alpha']);
    expect(change.cause).toBe('listChanged');
    expect((await sup.tools()).tools.map((tool) => tool.name)).toEqual(['alpha__one', 'alpha__two']);
  });

  it('is refreshed after a restart that brought other tools, and no call is lost', async () => {
    const alpha = await startToolServer([{ name: 'old', readOnly: true }]);
    servers.push(alpha);
    const sup = supervise({ alpha: alpha.url });
    await sup.start();
    expect((await sup.tools()).tools.map((tool) => tool.name)).toEqual(['alpha__old']);
    const changed = nextChange(sup, (change) => change.cause === 'ready');
    await alpha.restart([{ name: 'old', readOnly: true }, { name: 'new' }]);
    // The next call meets the restart (a dead socket or the lost session): it is sent again
    // (a read-only tool), on the new session.
    const result = await sup.catalog.call('alpha__old', { text: 'again' });
    expect(result.content).toEqual([{ type: 'text', text: 'old: again' }]);
    await changed;
    expect((await sup.tools()).tools.map((tool) => tool.name)).toEqual(['alpha__new', 'alpha__old']);
    expect(alpha.calls).toEqual(['old(again)']);
  });

  it('names a server that was down at the start as missing, then adds its tools when it comes up', async () => {
    const alpha = await toolServer('one');
    const late = await toolServer('later');
    await late.stop();
    const sup = supervise({ alpha: alpha.url, late: late.url });
    await sup.start();
    const first = await sup.tools();
    expect(first.tools.map((tool) => tool.name)).toEqual(['alpha__one']);
    expect(first.missing).toHaveLength(1);
    expect(first.missing[0]).toMatchObject({ server: 'late' });
    expect(first.missing[0]!.reason).toMatch(/not listed yet/);
    const changed = nextChange(sup, (change) => change.servers.includes('late'));
    await late.start();
    expect(await changed).toMatchObject({ cause: 'ready' });
    const second = await sup.tools();
    expect(second.missing).toEqual([]);
    expect(second.tools.map((tool) => tool.name)).toEqual(['alpha__one', 'late__later']);
    expect(second.version).toBeGreaterThan(first.version);
  });

  it('holds a call to a server that is down until it is back', async () => {
    const alpha = await startToolServer([{ name: 'one', readOnly: true }]);
    servers.push(alpha);
    const sup = supervise({ alpha: alpha.url });
    await sup.start();
    await sup.tools();
    const down = new Promise<void>((resolve) => {
      const off = sup.on('transition', (event) => {
        if (event.to !== 'reconnecting') return;
        off();
        resolve();
      });
    });
    await alpha.stop();
    const call = sup.catalog.call('alpha__one', { text: 'held' }, { timeoutMs: 10_000 });
    await down;
    // Still in the catalog while the server is down, and its call waits.
    expect(sup.catalog.tool('alpha__one')?.server).toBe('alpha');
    expect(sup.status().alpha!.requests.waiting).toBe(1);
    await alpha.start();
    expect((await call).content).toEqual([{ type: 'text', text: 'one: held' }]);
  });

  it('carries the request options: the signal cancels on the server, the timeout applies', async () => {
    const alpha = await startToolServer([{ name: 'wait', hang: true }]);
    servers.push(alpha);
    const sup = supervise({ alpha: alpha.url });
    await sup.start();
    const controller = new AbortController();
    const call = sup.catalog.call('alpha__wait', {}, { signal: controller.signal });
    await until(() => alpha.calls.length === 1);
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'REQUEST_ABORTED' });
    await until(() => alpha.cancelled.length === 1);
    expect(alpha.cancelled).toEqual(['wait']);
    await expect(sup.catalog.call('alpha__wait', {}, { timeoutMs: 50 })).rejects.toBeInstanceOf(RequestTimeoutError);
    alpha.release();
  });

  it('follows servers added and removed at run time', async () => {
    const alpha = await toolServer('one');
    const beta = await toolServer('two');
    const sup = supervise({ alpha: alpha.url });
    await sup.start();
    await sup.tools();
    const added = nextChange(sup, (change) => change.cause === 'ready' && change.servers.includes('beta'));
    sup.add('beta', { url: beta.url, ...fast });
    await added;
    expect((await sup.tools()).tools.map((tool) => tool.name)).toEqual(['alpha__one', 'beta__two']);
    const removed = nextChange(sup, (change) => change.cause === 'removed');
    await sup.remove('beta');
    expect(await removed).toMatchObject({ servers: ['beta'] });
    expect((await sup.tools()).tools.map((tool) => tool.name)).toEqual(['alpha__one']);
    await expect(sup.catalog.call('beta__two')).rejects.toBeInstanceOf(UnknownToolError);
  });
});

/** Waits for a condition the servers report (a few event-loop turns, no clock). */
async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 10_000 && !condition(); turn++) await new Promise((resolve) => setImmediate(resolve));
  expect(condition()).toBe(true);
}
