/**
 * Never a storm, wall-clock (issue 28): 200 servers on one origin, 10 callers each, the origin
 * down for 20 s with the default settings. The HTTP fixture runs in a child process of its own
 * (servers/fixture-process.ts) behind servers/origin-switch.ts, which closes the port for the
 * outage. Asserted: every call is answered, the connection attempts at the origin stay bounded
 * (one per slot, not one per server), all servers end ready. The recovery figures (first answer
 * and all answered after the return, attempts per second) are printed and measured against
 * today's behaviour in bench/origin-recovery.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureProcess, type FixtureProcess } from '../../servers/fixture-process.js';
import { startOriginSwitch, type OriginSwitch } from '../../servers/origin-switch.js';
import { createSupervisor } from '../../src/index.js';

const SERVERS = 200;
const CALLERS = 10;
const OUTAGE_MS = 20_000;

let fixture: FixtureProcess;
let front: OriginSwitch;
beforeAll(async () => {
  fixture = await startFixtureProcess({ responseMode: 'json' });
  front = await startOriginSwitch({ port: Number(new URL(fixture.url).port) });
});
afterAll(async () => {
  await front?.close();
  await fixture?.close();
});

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('200 servers on one origin, down for 20 s, 10 callers each (defaults)', () => {
  it('attempts stay bounded, every call is answered, all come back', async () => {
    const servers = Object.fromEntries(
      Array.from({ length: SERVERS }, (_, i) => [`s${i}`, { url: `${front.origin}/mcp` }]),
    );
    const sup = createSupervisor({ servers });
    try {
      await sup.start();
      const attempts: number[] = [];
      sup.on('transition', (t) => {
        if (t.to === 'connecting' && t.from !== null) attempts.push(performance.now());
      });
      await front.set('down');
      await sleep(10); // the clients see their sockets close
      const downAt = performance.now();
      let first: number | undefined;
      const calls: Array<Promise<string>> = [];
      for (let i = 0; i < SERVERS; i++)
        for (let c = 0; c < CALLERS; c++)
          calls.push(
            sup
              .server(`s${i}`)
              .callTool('echo', { text: `${i}.${c}` }, { timeoutMs: OUTAGE_MS + 60_000 })
              .then((r) => {
                first ??= performance.now();
                return String(r.content[0]?.['text']);
              }),
          );
      await sleep(OUTAGE_MS);
      const during = attempts.filter((at) => at >= downAt).length;
      await front.set('up');
      const upAt = performance.now();
      const answers = await Promise.all(calls);
      const allAt = performance.now();
      console.info(
        `[origin outage] ${SERVERS} servers × ${CALLERS} callers, down ${OUTAGE_MS / 1000} s: ${during} connection attempts at the origin ` +
          `(${(during / (OUTAGE_MS / 1000)).toFixed(1)}/s); first answer ${Math.round(first! - upAt)} ms after the return, all ${Math.round(allAt - upAt)} ms`,
      );
      expect(answers).toHaveLength(SERVERS * CALLERS);
      expect(answers[CALLERS + 1]).toBe('1.1');
      // One attempt per slot (at most 1 s apart while callers wait) for the whole origin: about 40.
      // Uncoordinated, 200 servers each retrying would make thousands.
      expect(during, 'connection attempts during the outage').toBeLessThanOrEqual(3 * (OUTAGE_MS / 1000));
      await expect.poll(() => Object.values(sup.status()).every((s) => s.state === 'ready')).toBe(true);
    } finally {
      await sup.stop();
    }
  });
});
