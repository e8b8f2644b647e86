/**
 * Session state survives a new session (issue #16 item 4): resource subscriptions, the logging
 * level and the client's roots are re-established on the new session before the requests that
 * waited for it are released, across a session expiry (the server answers 404 to the old session
 * id) and across a server restart (every session and connection gone, same port). The server is
 * built with the official SDK (servers/sdk-state-server.ts) and records each session's state.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connect, type LogMessage, type RestoreReport, type ServerHandle } from '../../src/index.js';
import { startStateServer, type StateServer } from '../../servers/sdk-state-server.js';

const FAULTS = [
  { name: 'a session expiry (404)', cause: (server: StateServer) => server.expireSessions() },
  { name: 'a server restart', cause: (server: StateServer) => server.restart() },
];

/**
 * The calls that meet the new session may have been written on a pooled socket the restart
 * killed (outcome unknown); these tools are harmless to repeat, so the calls say so.
 */
const SAFE = { retry: 'always' } as const;

function textOf(result: { content: { type: string; text?: unknown }[] }): string {
  return String(result.content[0]?.text);
}

describe.each(FAULTS)('session state across $name', ({ cause }) => {
  let server: StateServer;
  let handle: ServerHandle;
  const restored: RestoreReport[] = [];
  const logs: LogMessage[] = [];

  beforeEach(async () => {
    restored.length = 0;
    logs.length = 0;
    server = await startStateServer();
    handle = await connect(
      { url: server.url, keepalive: false },
      { name: 'state', handlers: { roots: () => ({ roots: [{ uri: 'file:///from-handler' }] }) } },
    );
    handle.on('sessionRestored', (report) => restored.push(report));
    handle.on('log', (message) => logs.push(message));
  });

  afterEach(async () => {
    await handle?.close();
    await server?.close();
  });

  /** The fault, then a call that needs the new session; returns the new session's record. */
  async function newSession<T>(call: () => Promise<T>): Promise<{ result: T; id: string }> {
    const old = server.latest()!.id;
    await cause(server);
    const result = await call();
    const latest = server.latest()!;
    expect(latest.id).not.toBe(old);
    return { result, id: latest.id };
  }

  it('resource subscriptions are made again; updates keep arriving as resourceUpdated', async () => {
    await handle.subscribeResource('memo://note');
    await handle.subscribeResource('memo://other');
    await handle.unsubscribeResource('memo://other');
    const updates: string[] = [];
    handle.on('resourceUpdated', (event) => updates.push(event.uri));

    await newSession(() => handle.callTool('touch', { uri: 'memo://note' }, SAFE));

    const session = server.latest()!;
    expect([...session.subscriptions]).toEqual(['memo://note']);
    // Re-subscribed before the waiting call was released on the new session.
    expect(session.methods.indexOf('resources/subscribe')).toBeLessThan(session.methods.indexOf('tools/call'));
    expect(updates).toEqual(['memo://note']);
    expect(restored).toEqual([
      { loggingLevel: undefined, subscriptions: ['memo://note'], rootsAnnounced: false, failed: [] },
    ]);
  });

  it('the logging level is set again: messages below it stay filtered on the new session', async () => {
    await handle.setLoggingLevel('warning');
    await handle.callTool('log', { level: 'info', data: 'quiet before' });
    expect(logs).toEqual([]);

    await newSession(() => handle.callTool('log', { level: 'info', data: 'quiet after' }, SAFE));
    await handle.callTool('log', { level: 'error', data: 'loud after' });

    const session = server.latest()!;
    expect(session.level).toBe('warning');
    expect(session.methods.indexOf('logging/setLevel')).toBeLessThan(session.methods.indexOf('tools/call'));
    // The log notification rides on the call's stream before its answer: had the level been lost, 'quiet after' would be here.
    expect(logs.map((message) => message.data)).toEqual(['loud after']);
    expect(restored[0]?.loggingLevel).toBe('warning');
  });

  it('the roots set with setRoots answer roots/list on the new session, which is told they changed', async () => {
    const asked = await handle.callTool('roots', {});
    expect(JSON.parse(textOf(asked))).toEqual([{ uri: 'file:///from-handler' }]);
    await handle.setRoots([{ uri: 'file:///work/project', name: 'project' }]);
    expect(server.latest()!.rootsChanged).toBe(1);

    const { result } = await newSession(() => handle.callTool('roots', {}, SAFE));

    expect(JSON.parse(textOf(result))).toEqual([{ uri: 'file:///work/project', name: 'project' }]);
    expect(server.latest()!.rootsChanged).toBe(1);
    expect(restored[0]?.rootsAnnounced).toBe(true);
  });

  it('nothing set, nothing sent: the new session gets only the waiting call', async () => {
    await newSession(() => handle.callTool('touch', { uri: 'memo://note' }, SAFE));
    expect(server.latest()!.methods).toEqual(['notifications/initialized', 'tools/call']);
    expect(restored).toEqual([]);
  });
});

describe('session state edge cases', () => {
  let server: StateServer;

  beforeEach(async () => {
    server = await startStateServer();
  });

  afterEach(async () => {
    await server?.close();
  });

  it('setRoots without a roots handler on a running session is a ConfigError naming handlers.roots', async () => {
    const handle = await connect({ url: server.url, keepalive: false }, { name: 'no-roots' });
    try {
      await expect(handle.setRoots([{ uri: 'file:///x' }])).rejects.toMatchObject({
        code: 'CONFIG_ERROR',
        issues: [{ path: 'handlers.roots' }],
      });
      await expect(handle.setRoots([{ uri: 'https://example.com' }])).rejects.toMatchObject({
        issues: [{ path: 'roots[0].uri', message: 'must be a file:// URI' }],
      });
    } finally {
      await handle.close();
    }
  });

  it('a restore step the new server refuses is reported (warning, sessionRestored.failed) and kept for the next session', async () => {
    const handle = await connect({ url: server.url, keepalive: false }, { name: 'refused' });
    const warnings: string[] = [];
    const restored: RestoreReport[] = [];
    handle.on('warning', (error) => warnings.push(error.message));
    handle.on('sessionRestored', (report) => restored.push(report));
    try {
      await handle.subscribeResource('memo://note');
      server.refused.set('resources/subscribe', 'no such resource after the upgrade');
      await server.expireSessions();
      await handle.ping();
      expect(restored).toHaveLength(1);
      expect(restored[0]!.subscriptions).toEqual([]);
      expect(restored[0]!.failed).toEqual([
        { what: 'subscription memo://note', error: expect.stringContaining('no such resource') },
      ]);
      expect(warnings.some((text) => text.includes('could not restore the subscription memo://note'))).toBe(true);

      server.refused.delete('resources/subscribe');
      await server.expireSessions();
      await handle.ping();
      expect(restored[1]!.subscriptions).toEqual(['memo://note']);
      expect([...server.latest()!.subscriptions]).toEqual(['memo://note']);
    } finally {
      await handle.close();
    }
  });
});
