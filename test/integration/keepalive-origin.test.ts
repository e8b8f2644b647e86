/**
 * The keepalive's proof per origin (`proof: 'origin'`, the default) against a real server:
 * servers of one origin share its request sockets, so an answer from the origin within the
 * interval proves them all alive and their probes are skipped; a frozen origin answers nobody,
 * so every server of it probes again and each is declared dead after its own maxMissed misses.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSupervisor, type ServerConfigInput, type Supervisor } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { quickRestart, recordTransitions, rpcPosts } from './helpers.js';

let fixture: HttpFixture | undefined;
let sup: Supervisor | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await sup?.stop().catch(() => {});
  await fixture?.close();
  sup = undefined;
  fixture = undefined;
});

/** Servers of one origin: the fixture's one path, told apart by a query the fixture records. */
const at = (f: HttpFixture, server: string) => `${f.url}?server=${server}`;
const pingsOf = (f: HttpFixture, server: string) =>
  rpcPosts(f, 'ping').filter((r) => r.path.endsWith(`?server=${server}`)).length;

/** Intervals driven by fake timers: nothing but the test moves the keepalive. */
const slow = { intervalMs: 30_000, timeoutMs: 5_000, maxMissed: 2 };

describe("keepalive proof: 'origin'", () => {
  it('does not probe a server whose sibling on the same origin answers; a server-proof one is probed', async () => {
    const f = (fixture = await startHttpFixture());
    const keepalive = { intervalMs: 150, timeoutMs: 1_000, maxMissed: 3 };
    const servers: Record<string, ServerConfigInput> = {
      busy: { url: at(f, 'busy'), keepalive },
      quiet: { url: at(f, 'quiet'), keepalive },
      control: { url: at(f, 'control'), keepalive: { ...keepalive, proof: 'server' } },
    };
    sup = createSupervisor({ servers });
    await sup.start();
    // The sibling's calls answer back to back until the control (proved only by itself) was probed 3 times.
    const busy = sup.server('busy');
    let calls = 0;
    while (pingsOf(f, 'control') < 3) {
      await busy.callTool('echo', { text: String(calls++) });
    }
    expect(calls).toBeGreaterThan(10);
    expect(pingsOf(f, 'quiet'), 'the quiet sibling is proved alive by the busy one').toBe(0);
    expect(pingsOf(f, 'busy')).toBe(0);
    expect(sup.server('quiet').status()).toMatchObject({ state: 'ready', keepalive: { missed: 0 } });
  });

  it('N idle servers of one origin get one probe per interval between them, in turn; a member removed is probed no more', async () => {
    const f = (fixture = await startHttpFixture());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const names = ['a', 'b', 'c', 'd'];
    sup = createSupervisor({
      servers: Object.fromEntries(names.map((name) => [name, { url: at(f, name), keepalive: slow }])),
    });
    await sup.start();
    const pings = () => rpcPosts(f, 'ping').length;
    for (let interval = 1; interval <= 4; interval++) {
      vi.advanceTimersByTime(slow.intervalMs);
      await expect.poll(pings).toBe(interval);
    }
    // One probe per interval for the origin, each member's turn once: not one per server per interval.
    expect(names.map((name) => pingsOf(f, name))).toEqual([1, 1, 1, 1]);
    expect(sup.server('a').status()).toMatchObject({
      state: 'ready',
      keepalive: { missed: 0, lastRttMs: expect.any(Number) },
    });

    await sup.remove('d');
    for (let interval = 5; interval <= 7; interval++) {
      vi.advanceTimersByTime(slow.intervalMs);
      await expect.poll(pings).toBe(interval);
    }
    expect(names.map((name) => pingsOf(f, name))).toEqual([2, 2, 2, 1]);
  });

  it('a frozen origin takes every member out of ready within maxMissed intervals; the last member out leaves no timer', async () => {
    const f = (fixture = await startHttpFixture());
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const names = ['x', 'y', 'z'];
    const servers: Record<string, ServerConfigInput> = {};
    for (const name of names) servers[name] = { url: at(f, name), keepalive: slow, restart: quickRestart(5) };
    sup = createSupervisor({ servers });
    await sup.start();
    const seen = recordTransitions(sup);
    f.faults.silentPings = true; // idle servers send nothing else: the origin answers nobody
    const started = Date.now();
    for (let miss = 1; miss <= slow.maxMissed; miss++) {
      vi.advanceTimersByTime(slow.intervalMs);
      await expect.poll(() => rpcPosts(f, 'ping').length).toBe(miss);
      vi.advanceTimersByTime(slow.timeoutMs); // the probe's timeout: a miss
      if (miss < slow.maxMissed) await expect.poll(() => sup!.server('x').status().keepalive.missed).toBe(miss);
    }
    await expect.poll(() => seen.filter((t) => t.from === 'ready').length).toBe(names.length);
    for (const name of names) {
      const left = seen.find((t) => t.server === name && t.from === 'ready')!;
      expect(left).toMatchObject({ to: 'reconnecting', cause: 'connection lost' });
      expect(left.error).toMatch(/2 keepalive probes in a row got no answer/);
      // maxMissed intervals and probe timeouts, and what expect.poll advances the fake clock by (50 ms a poll).
      expect(left.at - started).toBeLessThanOrEqual(slow.maxMissed * (slow.intervalMs + slow.timeoutMs) + 1_000);
    }
    f.faults.silentPings = false;
    await expect.poll(() => names.map((name) => sup!.server(name).status().state)).toEqual(names.map(() => 'ready'));

    // The last member leaving stops the origin's keepalive: no delay of it is left (the process may exit).
    await sup.stop();
    expect(vi.getTimerCount()).toBe(0);
  });
});
