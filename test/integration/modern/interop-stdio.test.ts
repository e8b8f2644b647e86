/**
 * Interop over stdio with servers built with the official v2 server package: the era probe
 * (`server/discover` first, spec 2026-07-28 stdio "Backward Compatibility"), and a restart of a
 * modern server's process (the discovery is done again for the new process).
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createSupervisor, type ServerHandle, type Supervisor, type TransitionEvent } from '../../../src/index.js';
import { nextTransition } from '../helpers.js';

const SERVER = fileURLToPath(new URL('../../../servers/v2-stdio-server.mjs', import.meta.url));
const FAST_RESTART = { backoff: { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 } };

let supervisor: Supervisor | undefined;
afterEach(async () => {
  await supervisor?.stop().catch(() => {});
  supervisor = undefined;
});

async function spawn(
  mode: 'modern' | 'dual' | 'legacy',
): Promise<{ handle: ServerHandle; transitions: TransitionEvent[] }> {
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
  const transitions: TransitionEvent[] = [];
  supervisor.on('transition', (e) => transitions.push(e));
  await supervisor.start();
  return { handle: supervisor.server('local'), transitions };
}

function text(result: unknown): string {
  return (result as { content: Array<{ text: string }> }).content[0]?.text ?? '';
}

describe('stdio servers of the v2 package', () => {
  it.each(['modern', 'dual'] as const)('a %s server is spoken to in the modern era', async (mode) => {
    const { handle, transitions } = await spawn(mode);
    expect(handle.status()).toMatchObject({
      state: 'ready',
      era: 'modern',
      protocolVersion: '2026-07-28',
      transport: 'stdio',
      serverInfo: { name: `v2-stdio-${mode}` },
    });
    expect(transitions.map((t) => [t.to, t.cause]).slice(0, 3)).toEqual([
      ['connecting', 'start'],
      ['discovering', 'transport ready'],
      ['ready', 'discovered (modern server)'],
    ]);
    expect(text(await handle.callTool('echo', { text: 'hi' }))).toMatch(/^hi \(pid \d+\)$/);
  });

  it('a legacy-only server answers the probe with -32601: initialize follows in the same process', async () => {
    const { handle, transitions } = await spawn('legacy');
    expect(handle.status()).toMatchObject({ state: 'ready', era: 'legacy', protocolVersion: '2025-11-25' });
    expect(transitions.map((t) => [t.to, t.cause]).slice(0, 4)).toEqual([
      ['connecting', 'start'],
      ['discovering', 'transport ready'],
      ['initializing', 'legacy server: initializing'],
      ['ready', 'initialized'],
    ]);
    expect(transitions.filter((t) => t.to === 'reconnecting')).toEqual([]);
    expect(text(await handle.callTool('echo', { text: 'old' }))).toMatch(/^old /);
  });

  it('a modern server whose process exits is restarted, discovered again, and serves calls', async () => {
    const { handle } = await spawn('modern');
    const firstPid = handle.status().pid;
    const back = nextTransition(handle, (t) => t.from === 'discovering' && t.to === 'ready');
    await handle.callTool('exit').catch(() => {});
    await back;
    expect(handle.status()).toMatchObject({ state: 'ready', era: 'modern', restarts: 1 });
    expect(handle.status().pid).not.toBe(firstPid);
    expect(text(await handle.callTool('echo', { text: 'again' }))).toBe(`again (pid ${handle.status().pid})`);
  });
});

describe('cancellation over stdio in the modern era', () => {
  it('an aborted call sends notifications/cancelled (stdio has no response stream to close)', async () => {
    const { handle } = await spawn('modern');
    const controller = new AbortController();
    const call = handle.callTool('wait', {}, { signal: controller.signal });
    await expect.poll(() => handle.status().requests.inFlight).toBe(1);
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'REQUEST_ABORTED' });
    await expect.poll(() => handle.status().stderrTail?.join('\n')).toMatch(/cancelled request \d+/);
  });
});
