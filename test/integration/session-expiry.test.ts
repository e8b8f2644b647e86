/**
 * Session expiry (docs/client-requirements.md §41, issue #2 item 5) against real servers: a 404 on a request
 * that carried the session id re-initializes once, replays what got 404, releases what was held.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect, ConnectionClosedError, TransportError, type ServerHandle } from '../../src/index.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { startSdkServer, type SdkServer } from '../../servers/sdk-servers.js';
import { nextTransition, quickRestart, recordTransitions, rpcPosts } from './helpers.js';

let fixture: HttpFixture | undefined;
let sdk: SdkServer | undefined;
let handle: ServerHandle | undefined;

afterEach(async () => {
  await handle?.close().catch(() => {});
  await fixture?.close();
  await sdk?.close();
  handle = undefined;
  fixture = undefined;
  sdk = undefined;
});

describe('session expiry', () => {
  it.each(['json', 'sse'] as const)(
    '§41a: concurrent 404s cause exactly one re-initialize; every request is replayed and resolves (%s responses)',
    async (responseMode) => {
      fixture = await startHttpFixture({ responseMode });
      handle = await connect({ url: fixture.url, protocolVersion: 'legacy' }, { name: 'fx' });
      const transitions = recordTransitions(handle);
      const firstSession = fixture.sessions.values().next().value;
      fixture.expireAllSessions();

      const texts = Array.from({ length: 8 }, (_, i) => `call-${i}`);
      const results = await Promise.all(texts.map((text) => handle!.callTool('echo', { text })));

      expect(results.map((r) => r.content[0]?.text)).toEqual(texts);
      expect(rpcPosts(fixture, 'initialize')).toHaveLength(2);
      expect(transitions.map((t) => `${t.from}->${t.to}`)).toEqual([
        'ready->expired',
        'expired->reinitializing',
        'reinitializing->ready',
      ]);
      expect(transitions[0]?.cause).toBe('session expired (HTTP 404)');
      const newSession = rpcPosts(fixture, 'initialize').length && fixture.sessions.values().next().value;
      expect(newSession).not.toBe(firstSession);
      // The replays carry the new session id.
      const answered = rpcPosts(fixture, 'tools/call').filter((r) => r.headers['mcp-session-id'] === newSession);
      expect(answered).toHaveLength(texts.length);
    },
  );

  it('§2: request ids keep increasing across the re-initialize and are never reused', async () => {
    fixture = await startHttpFixture();
    handle = await connect({ url: fixture.url, protocolVersion: 'legacy' }, { name: 'fx' });
    await handle.callTool('echo', { text: 'before' });
    fixture.expireAllSessions();
    await Promise.all([handle.callTool('echo', { text: 'a' }), handle.callTool('echo', { text: 'b' })]);
    await handle.callTool('echo', { text: 'after' });

    const ids = rpcPosts(fixture)
      .map((r) => r.body?.id)
      .filter((id): id is number => id !== undefined);
    expect(ids.every((id) => Number.isInteger(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // Everything sent on the new session (replays included) has a larger id than the
    // re-initialize, which is larger than anything sent on the old one.
    const reinit = rpcPosts(fixture, 'initialize')[1]!;
    const newSession = fixture.sessions.values().next().value;
    const onNew = rpcPosts(fixture).filter(
      (r) => r.headers['mcp-session-id'] === newSession && r.body?.id !== undefined,
    );
    const onOld = rpcPosts(fixture).filter(
      (r) => r.headers['mcp-session-id'] !== newSession && r.body?.id !== undefined && r !== reinit,
    );
    expect(onNew.length).toBeGreaterThanOrEqual(3);
    expect(onNew.every((r) => (r.body.id as number) > (reinit.body.id as number))).toBe(true);
    expect(onOld.every((r) => (r.body.id as number) < (reinit.body.id as number))).toBe(true);
  });

  it('holds requests issued while re-initializing and releases them after', async () => {
    fixture = await startHttpFixture();
    handle = await connect({ url: fixture.url, protocolVersion: 'legacy' }, { name: 'fx' });
    fixture.expireAllSessions();
    const reinitializing = nextTransition(handle, (t) => t.to === 'reinitializing');
    const first = handle.callTool('echo', { text: 'first' });
    await reinitializing;
    expect(handle.status().state).toBe('reinitializing');
    const held = handle.callTool('echo', { text: 'held' });
    expect(handle.status().requests.waiting).toBeGreaterThanOrEqual(1);

    expect((await first).content[0]?.text).toBe('first');
    expect((await held).content[0]?.text).toBe('held');
    // The held request never reached the dead session.
    const heldPosts = rpcPosts(fixture, 'tools/call').filter((r) => r.body.params.arguments.text === 'held');
    expect(heldPosts).toHaveLength(1);
  });

  it('§41c: a 404 on the re-initialize itself goes through the restart policy (no loop); failed for good, the parked request fails with why', async () => {
    fixture = await startHttpFixture();
    handle = await connect(
      { url: fixture.url, restart: quickRestart(0), revive: false, protocolVersion: 'legacy' },
      { name: 'fx' },
    );
    fixture.faults.notFoundOnInitialize = true;
    fixture.expireAllSessions();
    const failed = nextTransition(handle, (t) => t.to === 'failed');

    const error = await handle.callTool('echo', { text: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect((error as Error).message).toMatch(/the server has failed: .*HTTP 404.*initialize/);
    await failed;
    expect(rpcPosts(fixture, 'initialize')).toHaveLength(2);
    // Failed servers fail fast.
    await expect(handle.callTool('echo', { text: 'y' })).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it('§41b: a 404 on a request that carried no session id is a plain TransportError, not an expiry', async () => {
    fixture = await startHttpFixture({ sessionRequired: false });
    const wrongPath = fixture.url.replace(/\/mcp$/, '/nope');
    const error = await connect(
      { url: wrongPath, type: 'http', restart: quickRestart(0), protocolVersion: 'legacy' },
      { name: 'fx' },
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).status).toBe(404);
    // One attempt, no retry loop.
    expect(fixture.requests).toHaveLength(1);
  });

  it('§41e: a late 404 from the old session does not end the new one; that request is replayed', async () => {
    fixture = await startHttpFixture();
    handle = await connect({ url: fixture.url, protocolVersion: 'legacy' }, { name: 'fx' });
    const transitions = recordTransitions(handle);
    fixture.expireAllSessions();
    fixture.faults.delayNextNotFoundMs = 300;
    const late = handle.callTool('echo', { text: 'late' });
    const prompt = handle.callTool('echo', { text: 'prompt' });
    expect((await prompt).content[0]?.text).toBe('prompt');
    expect(handle.status().state).toBe('ready');
    expect((await late).content[0]?.text).toBe('late');
    expect(rpcPosts(fixture, 'initialize')).toHaveLength(2);
    expect(transitions.filter((t) => t.to === 'expired')).toHaveLength(1);
    expect(handle.status().state).toBe('ready');
  });

  it('a 500 keeps the session: no re-initialize, the next request carries the same session id', async () => {
    fixture = await startHttpFixture();
    handle = await connect({ url: fixture.url, protocolVersion: 'legacy' }, { name: 'fx' });
    fixture.faults.fail500Once = true;
    const error = await handle.callTool('echo', { text: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as TransportError).status).toBe(500);
    await handle.callTool('echo', { text: 'y' });
    expect(rpcPosts(fixture, 'initialize')).toHaveLength(1);
    const sessionIds = new Set(rpcPosts(fixture, 'tools/call').map((r) => r.headers['mcp-session-id']));
    expect(sessionIds.size).toBe(1);
    expect(handle.status().state).toBe('ready');
  });

  it('a server that requires a session id works from the first request (no 400 "Missing session ID")', async () => {
    fixture = await startHttpFixture({ sessionRequired: true });
    handle = await connect({ url: fixture.url, protocolVersion: 'legacy' }, { name: 'fx' });
    await handle.listTools();
    await handle.callTool('echo', { text: 'x' });
    const afterInit = fixture.requests.filter((r) => r.rpcMethod !== 'initialize');
    expect(afterInit.length).toBeGreaterThan(0);
    expect(afterInit.every((r) => typeof r.headers['mcp-session-id'] === 'string')).toBe(true);
  });

  it('recovers from an SDK server losing every session (StreamableHTTPServerTransport, stateful)', async () => {
    sdk = await startSdkServer({ stateful: true });
    handle = await connect({ url: sdk.url, protocolVersion: 'legacy' }, { name: 'sdk' });
    expect((await handle.callTool('add', { a: 2, b: 3 })).content[0]?.text).toBe('5');
    await sdk.terminateAllSessions();
    const results = await Promise.all([
      handle.callTool('echo', { text: 'one' }),
      handle.callTool('add', { a: 1, b: 1 }),
    ]);
    expect(results.map((r) => r.content[0]?.text)).toEqual(['one', '2']);
    expect(handle.status().state).toBe('ready');
    expect(sdk.sessionCount()).toBe(1);
  });
});
