/**
 * The keepalive's proof per origin (`proof: 'origin'`, the default) against a real server:
 * servers of one origin share its request sockets, so an answer from the origin within the
 * interval proves them all alive and their probes are skipped; a frozen origin answers nobody,
 * so every server of it probes again and each is declared dead after its own maxMissed misses.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createSupervisor, type ServerConfigInput, type Supervisor } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { nextTransition, quickRestart, rpcPosts } from './helpers.js';

let fixture: HttpFixture | undefined;
let sup: Supervisor | undefined;

afterEach(async () => {
  await sup?.stop().catch(() => {});
  await fixture?.close();
  sup = undefined;
  fixture = undefined;
});

/** Servers of one origin: the fixture's one path, told apart by a query the fixture records. */
const at = (f: HttpFixture, server: string) => `${f.url}?server=${server}`;
const pingsOf = (f: HttpFixture, server: string) =>
  rpcPosts(f, 'ping').filter((r) => r.path.endsWith(`?server=${server}`)).length;

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

  it('a frozen origin is still found: every server of it probes and is declared dead after its own maxMissed', async () => {
    const f = (fixture = await startHttpFixture());
    const keepalive = { intervalMs: 60, timeoutMs: 150, maxMissed: 2 };
    const names = ['x', 'y', 'z'];
    const servers: Record<string, ServerConfigInput> = {};
    for (const name of names) servers[name] = { url: at(f, name), keepalive, restart: quickRestart(5) };
    sup = createSupervisor({ servers });
    await sup.start();
    // Probes per origin: one interval of the siblings' probes, so some of them were skipped.
    const before = Object.fromEntries(names.map((name) => [name, pingsOf(f, name)]));
    f.faults.silentPings = true; // idle servers send nothing else: the origin answers nobody
    const lost = await Promise.all(
      names.map((name) => nextTransition(sup!.server(name), (t) => t.to === 'reconnecting')),
    );
    for (const transition of lost) {
      expect(transition.cause).toBe('connection lost');
      expect(transition.error).toMatch(/2 keepalive probes in a row got no answer/);
    }
    // Each found it by its own probes, maxMissed of them: no sibling's evidence stood in for an answer.
    for (const name of names) expect(pingsOf(f, name) - before[name]!, name).toBeGreaterThanOrEqual(2);
    f.faults.silentPings = false;
    await expect.poll(() => names.map((name) => sup!.server(name).status().state)).toEqual(names.map(() => 'ready'));
  });
});
