/**
 * Multi round-trip requests against servers built with the official v2 server package
 * (`inputRequired(...)`), over Streamable HTTP and stdio: one round (elicitation), three rounds
 * (elicitation, sampling with the state echoed, roots), and after a restart of the server process.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  connect,
  createSupervisor,
  type ClientHandlers,
  type ServerHandle,
  type Supervisor,
} from '../../../src/index.js';
import { buildMrtrServer } from '../../../servers/v2-mrtr-server.js';
import { nextTransition } from '../helpers.js';
import { startV2Server, type V2Server } from './v2-server.js';

const STDIO_SERVER = fileURLToPath(new URL('../../../servers/v2-mrtr-server.ts', import.meta.url));

const handlers: ClientHandlers = {
  elicitation: (params) =>
    params.message === 'Topic?'
      ? { action: 'accept', content: { topic: 'rain' } }
      : { action: 'accept', content: { name: 'Ada' } },
  sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'it falls' }, model: 'test' }),
  roots: () => ({ roots: [{ uri: 'file:///home/ada' }] }),
};

let server: V2Server | undefined;
let handle: ServerHandle | undefined;
let supervisor: Supervisor | undefined;
afterEach(async () => {
  await handle?.close().catch(() => {});
  await supervisor?.stop().catch(() => {});
  await server?.close();
  server = handle = supervisor = undefined;
});

function text(result: unknown): string {
  return (result as { content: Array<{ text: string }> }).content[0]?.text ?? '';
}

describe('v2 server package, multi round-trip requests', () => {
  it('over HTTP: one round and three rounds, each retry a new request', async () => {
    server = await startV2Server('modern', 0, 'v2-mrtr', { build: buildMrtrServer });
    handle = await connect({ url: server.url, keepalive: false }, { name: 'v2', handlers });
    expect(handle.status()).toMatchObject({ era: 'modern', protocolVersion: '2026-07-28' });
    expect(text(await handle.callTool('greet', {}))).toMatch(/^hello Ada \(pid \d+\)$/);
    expect(text(await handle.callTool('poem', {}))).toBe('topic:rain|line:it falls @ file:///home/ada');
    const poems = server.seen.filter((r) => (r.body as any)?.params?.name === 'poem').map((r) => r.body as any);
    expect(poems).toHaveLength(4);
    expect(new Set(poems.map((p) => p.id)).size).toBe(4);
    expect(poems.map((p) => p.params.requestState)).toEqual([
      undefined,
      undefined,
      'topic:rain',
      'topic:rain|line:it falls',
    ]);
  });

  it('over HTTP: getPrompt and readResource run their rounds too, and their results are checked', async () => {
    server = await startV2Server('modern', 0, 'v2-mrtr', { build: buildMrtrServer });
    handle = await connect({ url: server.url, keepalive: false }, { name: 'v2', handlers });
    const prompt = await handle.getPrompt('review');
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'review by Ada' } }]);
    const resource = await handle.readResource('mrtr://secret');
    expect(resource.contents).toEqual([{ uri: 'mrtr://secret', text: 'for Ada' }]);
  });

  it('over stdio, and again after the server process restarts', async () => {
    supervisor = createSupervisor({
      servers: {
        local: {
          command: process.execPath,
          args: ['--import', 'tsx', STDIO_SERVER],
          keepalive: false,
          restart: { backoff: { initialMs: 20, maxMs: 50, factor: 2, jitter: 0 } },
          requestTimeoutMs: 10_000,
          shutdown: { closeStdinTimeoutMs: 200, sigtermTimeoutMs: 200 },
        },
      },
      handlers,
    });
    await supervisor.start();
    const local = supervisor.server('local');
    expect(local.status()).toMatchObject({ state: 'ready', era: 'modern', transport: 'stdio' });
    const first = text(await local.callTool('greet', {}));
    expect(first).toMatch(/^hello Ada \(pid \d+\)$/);
    expect(text(await local.callTool('poem', {}))).toBe('topic:rain|line:it falls @ file:///home/ada');
    const pid = Number(/pid (\d+)/.exec(first)![1]);
    const back = nextTransition(local, (e) => e.to === 'ready');
    process.kill(pid, 'SIGKILL');
    await back;
    const again = text(await local.callTool('greet', {}));
    expect(again).toMatch(/^hello Ada \(pid \d+\)$/);
    expect(again).not.toBe(first);
  });
});
