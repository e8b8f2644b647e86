/**
 * A server process killed (SIGKILL) and started again on the same port, as a crashed deployment
 * that its orchestrator restarts: a real child process (servers/fixture-process.ts) built like the
 * SDK's examples. Counts come from the server processes, summed over their lives.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startSdkExampleProcess } from '../../../servers/fixture-process.js';
import { Cleanup } from '../../transports/helpers.js';
import { nextTransition } from '../helpers.js';
import { connectTo, outcomes, path } from './helpers.js';

// Each test starts node processes with tsx: seconds on a busy machine.
vi.setConfig({ testTimeout: 90_000 });
const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe('a server process killed and restarted on the same port', () => {
  it.each([
    ['SSE', false],
    ['JSON', true],
  ])(
    '%s answers: 20 concurrent callers while it is down, one reconnect, one new initialize, each call run once',
    async (_mode, jsonResponse) => {
      const server = cleanup.add(await startSdkExampleProcess({ jsonResponse }), (s) => s.close());
      const { handle, transitions } = await connectTo(cleanup, server.url, { requestTimeoutMs: 60_000 });
      await handle.callTool('echo', { text: 'before' });
      const firstPid = server.pid();

      const down = nextTransition(handle, (t) => t.to === 'reconnecting');
      await server.kill();
      // Refused connections are a connection event: status leaves ready, the calls wait.
      const calls = Array.from({ length: 20 }, (_, i) => handle.callTool('echo', { text: `caller ${i}` }));
      const settled = outcomes(calls);
      await down;
      expect(handle.status().state).not.toBe('ready');
      await server.start();
      expect(server.pid()).not.toBe(firstPid);

      expect(await settled).toEqual(Array.from({ length: 20 }, (_, i) => `caller ${i}`));
      expect(handle.status().state).toBe('ready');
      expect((await server.executions())['echo']).toBe(21);
      expect((await server.requests())['initialize']).toBe(2);
      expect(path(transitions).filter((p) => p === 'ready->reconnecting')).toHaveLength(1);
      expect(path(transitions).filter((p) => p.endsWith('->ready'))).toHaveLength(1);
    },
  );

  it('down across several failed reconnect attempts: the calls are held all along and answered once it is back', async () => {
    const server = cleanup.add(await startSdkExampleProcess(), (s) => s.close());
    const { handle, transitions } = await connectTo(cleanup, server.url, { requestTimeoutMs: 60_000 });
    await handle.listTools();
    await server.kill();
    let settledEarly = 0;
    const calls = Array.from({ length: 5 }, (_, i) =>
      handle.callTool('lookup', { key: `k${i}` }).finally(() => settledEarly++),
    );
    const settled = outcomes(calls);
    // Three refused attempts in a row: what seconds of downtime look like under backoff. Under the
    // default protocolVersion 'auto' a failed handshake forgets the era, so later attempts are
    // refused at the server/discover probe.
    for (let attempt = 0; attempt < 3; attempt++) {
      await nextTransition(
        handle,
        (t) => (t.from === 'initializing' || t.from === 'discovering') && t.to === 'reconnecting',
      );
    }
    expect(settledEarly).toBe(0);
    expect(handle.status().requests.waiting).toBe(5);
    expect(handle.status().lastError).toMatch(/ECONNREFUSED|refused/i);

    await server.start();
    expect(await settled).toEqual(['no k0', 'no k1', 'no k2', 'no k3', 'no k4']);
    expect((await server.executions())['lookup']).toBe(5);
    expect((await server.requests())['initialize']).toBe(2);
    expect(path(transitions).filter((p) => p === 'ready->reconnecting')).toHaveLength(1);
  });

  it('killed while calls run: a read-only call is sent again to the new process; an increment is not', async () => {
    // The first process runs these tools and hangs before answering; the next one answers.
    const server = cleanup.add(await startSdkExampleProcess({ stallTools: ['lookup', 'increment'] }), (s) => s.close());
    const { handle } = await connectTo(cleanup, server.url, { requestTimeoutMs: 60_000 });
    await handle.listTools(); // the runtime learns the annotations
    const read = handle.callTool('lookup', { key: 'x' });
    const write = handle.callTool('increment');
    const settled = outcomes([read, write]);
    await until(async () => {
      const executions = await server.executions();
      return executions['lookup'] === 1 && executions['increment'] === 1;
    });
    await server.kill();
    await server.start({ stallTools: [] });

    const [readOutcome, writeOutcome] = await settled;
    expect(readOutcome).toBe('no x');
    expect(writeOutcome).toBe('OutcomeUnknownError');
    const executions = await server.executions();
    expect(executions['lookup']).toBe(2); // once in the killed process, once in the new one
    expect(executions['increment']).toBe(1); // its outcome is the caller's to judge: never repeated
    expect((await server.requests())['initialize']).toBe(2);
  });
});

/** Polls an async condition on the next turns of the event loop (no clock involved). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (let turn = 0; turn < 10_000; turn++) {
    if (await condition()) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
  throw new Error('condition never held');
}
