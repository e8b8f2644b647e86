/**
 * No wait without a bound, on 2026-07-28 servers (issue #28 item 8): `handle.ping()` answers
 * (that era has no `ping`: a `server/discover` is the check, as the keepalive's), and a server
 * that just died does not stall `sup.tools()`: its listing (it sends a list lifetime of 0, so
 * every `tools()` lists again) is waited for `listWaitMs`, then it is named in `missing` with its
 * last error and the other servers' tools are served.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSupervisor, type Supervisor } from '../../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../../servers/http-fixture.js';
import { startModernFixture, type ModernFixture } from '../../../servers/modern-fixture.js';

let supervisor: Supervisor | undefined;
let legacy: HttpFixture | undefined;
let modern: ModernFixture | undefined;
afterEach(async () => {
  await supervisor?.stop().catch(() => {});
  await Promise.all([legacy?.close(), modern?.close()]);
  supervisor = legacy = modern = undefined;
});

const TOOL = { name: 'lookup', inputSchema: { type: 'object' } };

describe('2026-07-28 servers', () => {
  it('handle.ping() answers: a server/discover, not the ping that era removed', async () => {
    modern = await startModernFixture([TOOL]);
    supervisor = createSupervisor({ servers: { modern: { url: modern.url, keepalive: false } } });
    await supervisor.start();
    const before = modern.posts('server/discover').length;
    await expect(supervisor.server('modern').ping()).resolves.toBeUndefined();
    expect(modern.posts('ping')).toHaveLength(0);
    expect(modern.posts('server/discover')).toHaveLength(before + 1);
  });

  it('a server that just died does not stall sup.tools(): named in missing with its last error, the rest served', async () => {
    legacy = await startHttpFixture();
    modern = await startModernFixture([TOOL]);
    modern.ttlMs = 0; // listed again by every tools(), as the 2026-07-28 servers found in the wild do
    supervisor = createSupervisor({
      servers: {
        legacy: { url: legacy.url, protocolVersion: 'legacy', keepalive: false },
        modern: { url: modern.url, keepalive: false, restart: { backoff: { initialMs: 50, maxMs: 50 } } },
      },
      catalog: { listWaitMs: 300 },
    });
    await supervisor.start();
    const first = await supervisor.tools();
    expect(first.tools.map((t) => t.name)).toContain('modern__lookup');
    expect(first.missing).toEqual([]);

    await modern.close(); // it dies; nothing has noticed yet
    modern = undefined;
    const changes: string[][] = [];
    supervisor.catalog.on('changed', (change) => changes.push(change.servers));
    const snapshot = await supervisor.tools();
    expect(snapshot.tools.map((t) => t.server)).not.toContain('modern');
    expect(snapshot.tools.map((t) => t.name)).toContain('legacy__echo');
    const missing = snapshot.missing.find((m) => m.server === 'modern');
    expect(missing?.reason).toMatch(/did not answer within 300 ms/);
    expect(missing?.lastError).toMatch(/unreachable|ECONNREFUSED/);
    expect(changes).toContainEqual(['modern']);
  });
});
