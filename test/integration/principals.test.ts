/**
 * Many principals, one supervisor (docs/principals.md), against a real SDK server that answers
 * every call with the identity it saw: per-principal connections never carry another principal's
 * credential or session, private tool lists stay with their principal, shared servers keep one
 * connection.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError, createSupervisor, fromMcpServersJson, type Supervisor } from '../../src/index.js';
import { startIdentityServer, type IdentityServer } from './identity-server.js';

let server: IdentityServer | undefined;
let sup: Supervisor | undefined;

afterEach(async () => {
  await sup?.stop();
  await server?.close();
  sup = server = undefined;
});

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

describe('sup.as(principal)', () => {
  it('50 principals × 20 concurrent calls: every answer carries its caller (resolver and ${principal})', async () => {
    server = await startIdentityServer();
    sup = createSupervisor({
      servers: {
        resolved: { url: server.url, perPrincipal: true },
        templated: { url: server.url, perPrincipal: true, headers: { 'x-user': 'user-${principal}' } },
      },
      credentials: async ({ principal, server: name }) => {
        await new Promise((resolve) => setTimeout(resolve, Number(principal.id.slice(1)) % 7));
        return name === 'resolved' ? { headers: { 'x-user': `user-${principal.id}` } } : undefined;
      },
    });
    await sup.start();
    const principals = Array.from({ length: 50 }, (_, i) => `p${i}`);
    const answers = await Promise.all(
      principals.flatMap((id) =>
        Array.from({ length: 20 }, (_, call) =>
          sup!
            .as(id)
            .server(call % 2 ? 'resolved' : 'templated')
            .callTool('whoami')
            .then((result) => ({ id, text: text(result) })),
        ),
      ),
    );
    const crossings = answers.filter(({ id, text }) => text !== `user-${id}|user-${id}`);
    expect(crossings).toEqual([]);
    expect(answers).toHaveLength(1000);
    // One session per (server, principal): 2 × 50.
    expect(server.opened).toHaveLength(100);
  });

  it("a principal's private tool list is never another's, and a shared server keeps one connection", async () => {
    server = await startIdentityServer();
    sup = createSupervisor({
      servers: {
        mine: { url: server.url, perPrincipal: true, headers: { 'x-user': '${principal}' } },
        shared: { url: server.url, headers: { 'x-user': 'everyone' } },
      },
    });
    await sup.start();
    const alice = await sup.as('alice').tools();
    const bob = await sup.as('bob').tools();
    const names = (snapshot: typeof alice) => snapshot.tools.map((tool) => tool.name).sort();
    expect(names(alice).filter((name) => name.includes('private_'))).toEqual([
      'mine__private_alice',
      'shared__private_everyone',
    ]);
    expect(names(bob).filter((name) => name.includes('private_'))).toEqual([
      'mine__private_bob',
      'shared__private_everyone',
    ]);
    // Called through the view's catalog: bob's call goes over bob's connection.
    expect(text(await sup.as('bob').catalog.call('mine__whoami'))).toBe('bob|bob');
    expect(text(await sup.as('alice').catalog.call('shared__whoami'))).toBe('everyone|everyone');
    expect(server.opened.sort()).toEqual(['alice', 'bob', 'everyone']);
    expect(sup.as('alice').status().mine!.state).toBe('ready');
    expect(sup.as('carol').status().mine!.state).toBe('stopped');
  });

  it('stop() ends every principal connection (DELETE)', async () => {
    server = await startIdentityServer();
    sup = createSupervisor({
      servers: { mine: { url: server.url, perPrincipal: true, headers: { 'x-user': '${principal}' } } },
    });
    await sup.start();
    await Promise.all(['a', 'b', 'c'].map((id) => sup!.as(id).server('mine').callTool('whoami')));
    expect(server.live()).toBe(3);
    await sup.stop();
    expect(server.deleted).toBe(3);
  });

  it('a connection opened before start() serves once the supervisor starts', async () => {
    server = await startIdentityServer();
    sup = createSupervisor({
      servers: { mine: { url: server.url, perPrincipal: true, headers: { 'x-user': '${principal}' } } },
    });
    const call = sup.as('early').server('mine').callTool('whoami');
    await sup.start();
    expect(text(await call)).toBe('early|early');
  });

  it('${principal:<field>} reads what the host gave; a missing field is a ConfigError naming it', async () => {
    server = await startIdentityServer();
    sup = createSupervisor({
      servers: { mine: { url: server.url, perPrincipal: true, headers: { 'x-user': '${principal:login}' } } },
    });
    await sup.start();
    const answer = await sup.as({ id: 'u1', login: 'octocat' }).server('mine').callTool('whoami');
    expect(text(answer)).toBe('octocat|octocat');
    expect(() => sup!.as('u2').server('mine')).toThrow(ConfigError);
    expect(() => sup!.as('u2').server('mine')).toThrow(/servers\.mine\.headers\.x-user.*'login'/);
  });

  it('a resolver that fails fails that principal only, and is asked again on the next request', async () => {
    server = await startIdentityServer();
    let refuse = true;
    sup = createSupervisor({
      servers: { mine: { url: server.url, perPrincipal: true } },
      credentials: ({ principal }) => {
        if (principal.id === 'bad' && refuse) throw new Error('no such user');
        return { headers: { 'x-user': principal.id } };
      },
    });
    await sup.start();
    await expect(sup.as('bad').server('mine').callTool('whoami')).rejects.toThrow(
      /could not be resolved: no such user/,
    );
    expect(text(await sup.as('good').server('mine').callTool('whoami'))).toBe('good|good');
    refuse = false;
    expect(text(await sup.as('bad').server('mine').callTool('whoami'))).toBe('bad|bad');
  });

  it('bad input: a principal without an id, ${principal} on a shared server, sup.server() of a per-principal one', () => {
    sup = createSupervisor({ servers: { mine: { url: 'http://127.0.0.1:9/mcp', perPrincipal: true } } });
    expect(() => sup!.as('')).toThrow(ConfigError);
    expect(() => sup!.as({ id: 3 } as never)).toThrow(/principal/);
    expect(() => sup!.server('mine')).toThrow(/sup\.as\(principal\)\.server\('mine'\)/);
    expect(() =>
      createSupervisor({ servers: { s: { url: 'http://127.0.0.1:9/mcp', headers: { a: '${principal}' } } } }),
    ).toThrow(/servers\.s\.headers\.a.*perPrincipal/);
    expect(() =>
      createSupervisor({ servers: { s: { url: 'http://127.0.0.1:9/mcp', perPrincipal: true, resumeSession: true } } }),
    ).toThrow(ConfigError);
  });

  it('logs carry the principal as a stable hash by default, its id with principals.expose', async () => {
    server = await startIdentityServer();
    const entries: Record<string, unknown>[] = [];
    const log = (entry: object) => void entries.push(entry as Record<string, unknown>);
    const logger = { debug: log, info: log, warn: log, error: log };
    const servers = { mine: { url: server.url, perPrincipal: true, headers: { 'x-user': '${principal}' } } };
    sup = createSupervisor({ servers, logger });
    await sup.start();
    await sup.as('alice@example.com').server('mine').callTool('whoami');
    const labels = new Set(entries.map((entry) => entry.principal));
    expect([...labels]).toEqual([sup.as('alice@example.com').label]);
    expect(sup.as('alice@example.com').label).toMatch(/^principal-[\w-]{12}$/);
    expect(JSON.stringify(entries)).not.toContain('alice@example.com');
    await sup.stop();
    entries.length = 0;
    sup = createSupervisor({ servers, logger, principals: { expose: true } });
    await sup.start();
    await sup.as('alice@example.com').server('mine').callTool('whoami');
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((entry) => entry.principal === 'alice@example.com')).toBe(true);
  });

  it('a config file keeps ${principal} in headers for each connection; elsewhere it is a ConfigError', async () => {
    server = await startIdentityServer();
    const servers = fromMcpServersJson(
      { mcpServers: { crm: { url: server.url, perPrincipal: true, headers: { 'x-user': '${principal:login}' } } } },
      { env: {} },
    );
    sup = createSupervisor({ servers });
    await sup.start();
    const answer = await sup.as({ id: '7', login: 'dana' }).server('crm').callTool('whoami');
    expect(text(answer)).toBe('dana|dana');
    expect(() =>
      fromMcpServersJson({ mcpServers: { crm: { url: 'http://h/${principal}', perPrincipal: true } } }, { env: {} }),
    ).toThrow(/servers\.crm\.url: \$\{principal\} is expanded in `headers` and `env` only/);
  });

  it('200 principals through a pool of 20: live connections never exceed the bound, the evicted are DELETEd', async () => {
    server = await startIdentityServer();
    sup = createSupervisor({
      servers: { mine: { url: server.url, perPrincipal: true, headers: { 'x-user': '${principal}' } } },
      principals: { maxConnections: 20 },
    });
    await sup.start();
    let mostLive = 0;
    for (let batch = 0; batch < 10; batch++) {
      const ids = Array.from({ length: 20 }, (_, i) => `b${batch}-${i}`);
      const answers = await Promise.all(ids.map((id) => sup!.as(id).server('mine').callTool('whoami')));
      expect(answers.map(text)).toEqual(ids.map((id) => `${id}|${id}`));
      mostLive = Math.max(mostLive, server.live());
    }
    await vi.waitFor(() => expect(server!.deleted).toBe(180));
    expect(mostLive).toBeLessThanOrEqual(20);
    expect(server.live()).toBe(20);
    // The most recent principals are still served by their connection; an evicted one gets a new one.
    expect(text(await sup.as('b9-0').server('mine').callTool('whoami'))).toBe('b9-0|b9-0');
    expect(server.opened).toHaveLength(200);
    expect(text(await sup.as('b0-0').server('mine').callTool('whoami'))).toBe('b0-0|b0-0');
    expect(server.opened).toHaveLength(201);
  });

  it('a connection unused for principals.idleMs closes (DELETE); the next request opens a new one', async () => {
    server = await startIdentityServer();
    sup = createSupervisor({
      servers: { mine: { url: server.url, perPrincipal: true, headers: { 'x-user': '${principal}' } } },
      principals: { idleMs: 300 },
    });
    await sup.start();
    await Promise.all(['a', 'b', 'c'].map((id) => sup!.as(id).server('mine').callTool('whoami')));
    expect(server.live()).toBe(3);
    await vi.waitFor(() => expect(server!.deleted).toBe(3), { timeout: 10_000 });
    expect(sup.as('a').status().mine!.state).toBe('stopped');
    expect(text(await sup.as('a').server('mine').callTool('whoami'))).toBe('a|a');
    expect(server.opened).toHaveLength(4);
  });

  it('bad bounds are a ConfigError naming the field', () => {
    expect(() =>
      createSupervisor({ servers: { s: { url: 'http://127.0.0.1:9/mcp' } }, principals: { maxConnections: 0 } }),
    ).toThrow(/principals\.maxConnections: must be a positive integer/);
    expect(() =>
      createSupervisor({ servers: { s: { url: 'http://127.0.0.1:9/mcp' } }, principals: { idleMs: 1.5 } }),
    ).toThrow(/principals\.idleMs/);
  });
});
