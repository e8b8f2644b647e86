/**
 * Authorization as a connection state, with a hand-written AuthProvider against real servers:
 * 401 (and 403 `insufficient_scope`) challenges park the refused requests, one authorization runs,
 * then the requests are resent. The OAuth client itself is tested in test/unit/auth and by the
 * conformance suite.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthorizationError,
  AuthorizationRequiredError,
  connect,
  createSupervisor,
  type ServerHandle,
  type Supervisor,
} from '../../src/index.js';
import type { AuthChallenge, AuthProvider } from '../../src/auth/types.js';
import { startHttpFixture, type HttpFixture } from '../../servers/http-fixture.js';
import { startLegacySseFixture, type LegacySseFixture } from '../../servers/legacy-sse-fixture.js';
import { recordTransitions, rpcPosts } from './helpers.js';

let fixture: HttpFixture | undefined;
let legacy: LegacySseFixture | undefined;
let handle: ServerHandle | undefined;
let supervisor: Supervisor | undefined;

afterEach(async () => {
  await handle?.close().catch(() => {});
  await supervisor?.stop().catch(() => {});
  await fixture?.close();
  await legacy?.close();
  handle = fixture = legacy = supervisor = undefined;
});

/** A provider that hands out the tokens a test queues up, recording every challenge it answers. */
class ScriptedProvider implements AuthProvider {
  generation = 0;
  token: string | undefined;
  readonly challenges: AuthChallenge[] = [];
  confirmations = 0;
  /** Called per authorization; returns the new token or throws. */
  constructor(private readonly next: (challenge: AuthChallenge, attempt: number) => string | Promise<string>) {}
  authorization(): string | undefined {
    return this.token === undefined ? undefined : `Bearer ${this.token}`;
  }
  async authorize(challenge: AuthChallenge): Promise<void> {
    this.challenges.push(challenge);
    this.token = await this.next(challenge, this.challenges.length);
    this.generation++;
  }
  confirmed(): void {
    this.confirmations++;
  }
}

describe('authorization state', () => {
  it('a 401 on initialize goes through authorizing once, then the handshake succeeds with the token', async () => {
    fixture = await startHttpFixture();
    fixture.faults.bearer = {
      token: 'tok-1',
      challenge: 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"',
    };
    const auth = new ScriptedProvider(() => 'tok-1');
    supervisor = createSupervisor({ servers: { fx: { url: fixture.url, auth, protocolVersion: 'legacy' } } });
    const transitions = recordTransitions(supervisor);
    await supervisor.start();

    expect(supervisor.server('fx').status()).toMatchObject({ state: 'ready', auth: { authorized: true } });
    expect(transitions.map((t) => `${t.from}->${t.to}`)).toEqual([
      'null->connecting',
      'connecting->initializing',
      'initializing->authorizing',
      'authorizing->connecting',
      'connecting->initializing',
      'initializing->ready',
    ]);
    expect(transitions[2]?.cause).toBe('authorization required');
    expect(transitions[3]?.cause).toBe('authorized');
    expect(auth.challenges).toHaveLength(1);
    expect(auth.challenges[0]).toMatchObject({
      status: 401,
      wwwAuthenticate: expect.stringContaining('resource_metadata='),
    });
    expect(auth.challenges[0]?.resourceUrl.href).toBe(fixture.url);
    // Every message after the authorization carries the token: initialize, initialized, the GET listener.
    const after = fixture.requests.slice(fixture.requests.findIndex((r) => r.headers.authorization !== undefined));
    expect(after.length).toBeGreaterThanOrEqual(3);
    expect(after.every((r) => r.headers.authorization === 'Bearer tok-1')).toBe(true);
    expect(after.some((r) => r.method === 'GET')).toBe(true);
    await supervisor.server('fx').callTool('echo', { text: 'hi' });
    expect(auth.confirmations).toBe(1);
    expect(supervisor.server('fx').status().restarts).toBe(0);
  });

  it('concurrent 401s mid-session cause exactly one authorization; every request is resent and resolves on the same session', async () => {
    fixture = await startHttpFixture({ responseMode: 'sse' });
    fixture.faults.bearer = { token: 'tok-1' };
    const auth = new ScriptedProvider((_, attempt) => `tok-${attempt}`);
    handle = await connect({ url: fixture.url, auth, protocolVersion: 'legacy' }, { name: 'fx' });
    const sessionsBefore = [...fixture.sessions];
    const transitions = recordTransitions(handle);
    fixture.faults.bearer = { token: 'tok-2' }; // the server rotated: tok-1 is refused from now on

    const texts = Array.from({ length: 10 }, (_, i) => `call-${i}`);
    const results = await Promise.all(texts.map((text) => handle!.callTool('echo', { text })));

    expect(results.map((r) => r.content[0]?.text)).toEqual(texts);
    expect(auth.challenges).toHaveLength(2); // the first connect, then one for all ten refusals
    expect(transitions.map((t) => `${t.from}->${t.to}`)).toEqual(['ready->authorizing', 'authorizing->ready']);
    expect([...fixture.sessions]).toEqual(sessionsBefore);
    expect(rpcPosts(fixture, 'initialize')).toHaveLength(2); // no new handshake for a live session
    const accepted = rpcPosts(fixture, 'tools/call').filter((r) => r.headers.authorization === 'Bearer tok-2');
    expect(accepted).toHaveLength(texts.length);
  });

  it('a GET listener refused with 401 while idle authorizes on its own, and reopens with the new token', async () => {
    fixture = await startHttpFixture();
    fixture.faults.bearer = { token: 'tok-1' };
    const auth = new ScriptedProvider((_, attempt) => `tok-${attempt}`);
    handle = await connect({ url: fixture.url, auth, protocolVersion: 'legacy' }, { name: 'fx' });
    await expect.poll(() => fixture!.getStreamCount()).toBe(1);
    const transitions = recordTransitions(handle);
    fixture.faults.bearer = { token: 'tok-2' };
    fixture.closeGetStreams(); // the listener reconnects with tok-1 and is refused

    await expect
      .poll(() => transitions.map((t) => `${t.from}->${t.to}`))
      .toEqual(['ready->authorizing', 'authorizing->ready']);
    expect(transitions[0]?.error).toContain('the GET stream');
    await expect.poll(() => fixture!.getStreamCount()).toBe(1);
    const gets = fixture.requests.filter((r) => r.method === 'GET');
    expect(gets.at(-1)?.headers.authorization).toBe('Bearer tok-2');
    expect(auth.challenges).toHaveLength(2);
    expect(rpcPosts(fixture, 'initialize')).toHaveLength(2); // the first connect's two; the session lived on
  });

  it('a 403 insufficient_scope on a call is a step-up challenge; the call succeeds after it', async () => {
    fixture = await startHttpFixture();
    const scopeChallenge = 'Bearer error="insufficient_scope", scope="mcp:basic mcp:write"';
    fixture.faults.forbidToolsCall = scopeChallenge;
    const auth = new ScriptedProvider(() => {
      fixture!.faults.forbidToolsCall = undefined; // the new token has the scope
      return 'tok-write';
    });
    handle = await connect({ url: fixture.url, auth, protocolVersion: 'legacy' }, { name: 'fx' });
    const result = await handle.callTool('echo', { text: 'write' });
    expect(result.content[0]?.text).toBe('write');
    expect(auth.challenges).toEqual([expect.objectContaining({ status: 403, wwwAuthenticate: scopeChallenge })]);
  });

  it('a 403 without insufficient_scope is not an authorization challenge', async () => {
    fixture = await startHttpFixture();
    fixture.faults.forbidToolsCall = 'Bearer error="access_denied"';
    const auth = new ScriptedProvider(() => 'never');
    handle = await connect({ url: fixture.url, auth, protocolVersion: 'legacy' }, { name: 'fx' });
    const error = await handle.callTool('echo', { text: 'x' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TRANSPORT_ERROR', status: 403 });
    expect(auth.challenges).toHaveLength(0);
    expect(handle.status().state).toBe('ready');
  });

  it('without an auth provider a 401 is fatal at once: no restarts, a typed error that says what to configure', async () => {
    fixture = await startHttpFixture();
    fixture.faults.bearer = { token: 'secret-token' };
    const error = await connect({ url: fixture.url, protocolVersion: 'legacy' }, { name: 'fx' }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AuthorizationRequiredError);
    expect(error).toMatchObject({ fatal: true, status: 401 });
    expect((error as Error).message).toContain('configure `auth`');
    expect(rpcPosts(fixture, 'initialize')).toHaveLength(1);
  });

  it('a failed authorization fails the refused requests with its typed error and the server goes to failed when fatal', async () => {
    fixture = await startHttpFixture();
    fixture.faults.bearer = { token: 'tok-1' };
    let calls = 0;
    const auth = new ScriptedProvider(() => {
      calls++;
      if (calls === 1) return 'tok-1';
      throw new AuthorizationError('the token endpoint answered invalid_grant', { oauthError: 'invalid_grant' });
    });
    handle = await connect({ url: fixture.url, auth, protocolVersion: 'legacy' }, { name: 'fx' });
    fixture.faults.bearer = { token: 'tok-2' };
    const error = await handle.callTool('echo', { text: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthorizationError);
    expect(error).toMatchObject({ oauthError: 'invalid_grant' });
    await expect.poll(() => handle!.status().state).toBe('failed');
    expect(handle.status().lastError).toContain('invalid_grant');
    await expect(handle.callTool('echo', { text: 'later' })).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
  });

  it('tokens never reach errors or status, even when the server echoes them', async () => {
    fixture = await startHttpFixture();
    fixture.faults.bearer = { token: 'super-secret-token-value' };
    const auth = new ScriptedProvider(() => 'super-secret-token-value');
    handle = await connect({ url: fixture.url, auth, protocolVersion: 'legacy' }, { name: 'fx' });
    fixture.faults.echoAuthorizationOnce = true;
    const error = (await handle.callTool('echo', { text: 'x' }).catch((e: unknown) => e)) as Error & { body?: string };
    expect(error).toMatchObject({ code: 'TRANSPORT_ERROR', status: 500 });
    expect(error.message).toContain('[redacted]');
    expect(`${error.message} ${error.body} ${JSON.stringify(handle.status())}`).not.toContain(
      'super-secret-token-value',
    );
  });

  it('legacy SSE: a 401 on the stream authorizes, then the stream opens with the token', async () => {
    legacy = await startLegacySseFixture({ bearerToken: 'legacy-tok' });
    const auth = new ScriptedProvider(() => 'legacy-tok');
    supervisor = createSupervisor({ servers: { old: { url: legacy.url, auth, protocolVersion: 'legacy' } } });
    const transitions = recordTransitions(supervisor);
    await supervisor.start();
    expect(supervisor.server('old').status()).toMatchObject({ state: 'ready', transport: 'sse' });
    expect(transitions.map((t) => `${t.from}->${t.to}`).slice(0, 3)).toEqual([
      'null->connecting',
      'connecting->authorizing',
      'authorizing->connecting',
    ]);
    const result = await supervisor.server('old').callTool('echo', { text: 'legacy' });
    expect(result.content[0]?.text).toBe('legacy');
    expect(
      legacy.requests.filter((r) => r.headers.authorization === 'Bearer legacy-tok').length,
    ).toBeGreaterThanOrEqual(3);
  });
});
