/** The loopback redirect listener, with real HTTP requests standing in for the browser. */
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createLoopbackRedirect,
  defaultOpenBrowser,
  type LoopbackRedirect,
  type LoopbackRedirectOptions,
} from '../../../src/auth/loopback-redirect.js';
import { AuthorizationError, ConfigError } from '../../../src/core/errors.js';
import { rejection } from '../../transports/helpers.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A browser's request: one connection, no agent, so nothing outlives the test. */
function browse(url: string, init: { method?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? 'GET', headers: init.headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const listeners: LoopbackRedirect[] = [];

async function listener(options: LoopbackRedirectOptions = {}): Promise<LoopbackRedirect> {
  const created = await createLoopbackRedirect({ print: () => undefined, ...options });
  listeners.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(listeners.splice(0).map((l) => l.close()));
});

function authorizationUrl(redirectUri: string, state = 'state-1'): URL {
  const url = new URL('https://auth.example.com/authorize');
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: 'cli',
    redirect_uri: redirectUri,
    state,
    code_challenge: 'abc',
    code_challenge_method: 'S256',
  }).toString();
  return url;
}

describe('createLoopbackRedirect', () => {
  it('listens on a random 127.0.0.1 port with a /callback redirect URI', async () => {
    const { redirectUri } = await listener();
    expect(redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(Number(new URL(redirectUri).port)).toBeGreaterThan(0);
  });

  it('prints and opens the authorization URL, then resolves with the callback URL and shows a success page', async () => {
    const lines: string[] = [];
    const opened: URL[] = [];
    const answers: Promise<Answer>[] = [];
    const loopback = await listener({
      print: (line) => lines.push(line),
      open: (url) => {
        opened.push(url);
        // The "browser": the user approves, the authorization server redirects back with the state it got.
        answers.push(browse(`${loopback.redirectUri}?code=the-code&state=${url.searchParams.get('state')}`));
      },
    });
    const auth = authorizationUrl(loopback.redirectUri);
    const callback = await loopback.onRedirect(auth, new AbortController().signal);

    expect(callback).toBeInstanceOf(URL);
    expect(callback.href).toBe(`${loopback.redirectUri}?code=the-code&state=state-1`);
    expect(callback.searchParams.get('code')).toBe('the-code');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(auth.href);
    expect(opened.map((u) => u.href)).toEqual([auth.href]);

    const answer = await answers[0]!;
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.headers['referrer-policy']).toBe('no-referrer');
    expect(answer.body).toContain('Authorization complete');
    expect(answer.body).not.toContain('the-code');
  });

  it('resolves with an error redirect too, and shows the error escaped', async () => {
    const loopback = await listener({ path: '/oauth/done', successHtml: '<p>custom</p>' });
    expect(loopback.redirectUri).toMatch(/\/oauth\/done$/);
    const waiting = loopback.onRedirect(authorizationUrl(loopback.redirectUri), new AbortController().signal);
    const query = new URLSearchParams({
      error: 'access_denied',
      error_description: 'The user said <script>no</script>',
      state: 'state-1',
    });
    const answer = await browse(`${loopback.redirectUri}?${query.toString()}`);
    const callback = await waiting;
    expect(callback.searchParams.get('error')).toBe('access_denied');
    expect(answer.body).toContain('Authorization failed');
    expect(answer.body).toContain('access_denied');
    expect(answer.body).toContain('&#60;script&#62;');
    expect(answer.body).not.toContain('<script>');
    expect(answer.body).not.toContain('custom');
  });

  it('answers a custom success page', async () => {
    const loopback = await listener({ successHtml: '<p>custom success</p>' });
    const waiting = loopback.onRedirect(authorizationUrl(loopback.redirectUri), new AbortController().signal);
    const answer = await browse(`${loopback.redirectUri}?code=c&state=state-1`);
    await waiting;
    expect(answer.body).toBe('<p>custom success</p>');
  });

  it('answers 404 for other paths, 405 for other methods, 400 for other hosts, and keeps waiting', async () => {
    const loopback = await listener();
    const origin = new URL(loopback.redirectUri).origin;
    const port = new URL(loopback.redirectUri).port;
    const waiting = loopback.onRedirect(authorizationUrl(loopback.redirectUri), new AbortController().signal);

    expect((await browse(`${origin}/favicon.ico`)).status).toBe(404);
    expect((await browse(`${origin}/callback/extra?code=c&state=state-1`)).status).toBe(404);
    const post = await browse(`${loopback.redirectUri}?code=c&state=state-1`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET');
    expect(
      (
        await browse(`${loopback.redirectUri}?code=c&state=state-1`, {
          headers: { host: `rebound.example.com:${port}` },
        })
      ).status,
    ).toBe(400);
    expect((await browse(loopback.redirectUri)).status).toBe(400);

    await browse(`${loopback.redirectUri}?code=c&state=state-1`);
    expect((await waiting).searchParams.get('code')).toBe('c');
  });

  it('ignores a redirect with a different state (a stale tab) and keeps waiting', async () => {
    const loopback = await listener();
    const waiting = loopback.onRedirect(
      authorizationUrl(loopback.redirectUri, 'current'),
      new AbortController().signal,
    );
    const stale = await browse(`${loopback.redirectUri}?code=old&state=earlier`);
    expect(stale.status).toBe(400);
    expect(stale.body).toContain('earlier attempt');
    await browse(`${loopback.redirectUri}?code=new&state=current`);
    expect((await waiting).searchParams.get('code')).toBe('new');
  });

  it('answers 400 when no authorization is waiting', async () => {
    const loopback = await listener();
    const answer = await browse(`${loopback.redirectUri}?code=c&state=s`);
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('No authorization in progress');
  });

  it('rejects a second authorization while one is waiting, without disturbing the first', async () => {
    const loopback = await listener();
    const first = loopback.onRedirect(authorizationUrl(loopback.redirectUri), new AbortController().signal);
    const second = await rejection(
      loopback.onRedirect(authorizationUrl(loopback.redirectUri, 'other'), new AbortController().signal),
    );
    expect(second).toBeInstanceOf(AuthorizationError);
    expect(second.message).toContain('already waiting');
    await browse(`${loopback.redirectUri}?code=c&state=state-1`);
    expect((await first).searchParams.get('state')).toBe('state-1');
  });

  it('rejects on abort, and can authorize again afterwards', async () => {
    const loopback = await listener();
    const controller = new AbortController();
    const waiting = loopback.onRedirect(authorizationUrl(loopback.redirectUri), controller.signal);
    controller.abort(new Error('server closing'));
    const error = await rejection(waiting);
    expect(error).toBeInstanceOf(AuthorizationError);
    expect(error.message).toContain('aborted');
    expect((error as AuthorizationError).fatal).toBe(false);

    const lines: string[] = [];
    const already = await listener({ print: (line) => lines.push(line) });
    await expect(already.onRedirect(authorizationUrl(already.redirectUri), AbortSignal.abort())).rejects.toBeInstanceOf(
      AuthorizationError,
    );
    expect(lines).toEqual([]);

    const again = loopback.onRedirect(authorizationUrl(loopback.redirectUri), new AbortController().signal);
    await browse(`${loopback.redirectUri}?code=c2&state=state-1`);
    expect((await again).searchParams.get('code')).toBe('c2');
  });

  it('rejects after timeoutMs', async () => {
    const loopback = await listener({ timeoutMs: 50 });
    const started = Date.now();
    const error = await rejection(
      loopback.onRedirect(authorizationUrl(loopback.redirectUri), new AbortController().signal),
    );
    expect(error).toBeInstanceOf(AuthorizationError);
    expect(error.message).toContain('within 50 ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
  });

  it('keeps waiting when opening the browser fails, and says so', async () => {
    const lines: string[] = [];
    const loopback = await listener({
      print: (line) => lines.push(line),
      open: async () => {
        throw new Error('no display');
      },
    });
    const waiting = loopback.onRedirect(authorizationUrl(loopback.redirectUri), new AbortController().signal);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines[1]).toContain('no display');
    await browse(`${loopback.redirectUri}?code=c&state=state-1`);
    expect((await waiting).searchParams.get('code')).toBe('c');
  });

  it('close rejects a waiting authorization and frees the port', async () => {
    const loopback = await listener();
    const port = Number(new URL(loopback.redirectUri).port);
    const waiting = loopback.onRedirect(authorizationUrl(loopback.redirectUri), new AbortController().signal);
    await loopback.close();
    await loopback.close();
    const error = await rejection(waiting);
    expect(error).toBeInstanceOf(AuthorizationError);
    expect(error.message).toContain('closed');
    await expect(
      loopback.onRedirect(authorizationUrl(loopback.redirectUri), new AbortController().signal),
    ).rejects.toBeInstanceOf(AuthorizationError);
    await expect(browse(loopback.redirectUri)).rejects.toMatchObject({ code: 'ECONNREFUSED' });

    const reused = await listener({ port });
    expect(reused.redirectUri).toBe(`http://127.0.0.1:${port}/callback`);
  });

  it('close frees the port even while a browser connection is half-way through a request', async () => {
    const loopback = await listener();
    const port = Number(new URL(loopback.redirectUri).port);
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.write('GET /callback HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await loopback.close();
    await ended;
    const again = await listener({ port });
    expect(again.redirectUri).toContain(`:${port}/`);
  });

  it('uses localhost in the redirect URI when asked, and answers there', async () => {
    const loopback = await listener({ host: 'localhost' });
    expect(loopback.redirectUri).toMatch(/^http:\/\/localhost:\d+\/callback$/);
    const waiting = loopback.onRedirect(authorizationUrl(loopback.redirectUri), new AbortController().signal);
    await browse(`${loopback.redirectUri}?code=c&state=state-1`);
    expect((await waiting).host).toBe(new URL(loopback.redirectUri).host);
  });

  it('rejects bad options, a busy port and mismatched authorization URLs with ConfigError', async () => {
    await expect(createLoopbackRedirect({ port: -1 })).rejects.toBeInstanceOf(ConfigError);
    await expect(createLoopbackRedirect({ port: 1.5 })).rejects.toBeInstanceOf(ConfigError);
    await expect(createLoopbackRedirect({ host: '0.0.0.0' as '127.0.0.1' })).rejects.toBeInstanceOf(ConfigError);
    await expect(createLoopbackRedirect({ path: 'callback' })).rejects.toBeInstanceOf(ConfigError);
    await expect(createLoopbackRedirect({ path: '/a/../b' })).rejects.toBeInstanceOf(ConfigError);
    await expect(createLoopbackRedirect({ path: '/cb?x=1' })).rejects.toBeInstanceOf(ConfigError);
    await expect(createLoopbackRedirect({ timeoutMs: 0 })).rejects.toBeInstanceOf(ConfigError);

    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const error = await rejection(createLoopbackRedirect({ port }));
      expect(error).toBeInstanceOf(ConfigError);
      expect(error.message).toContain('EADDRINUSE');
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }

    const loopback = await listener();
    const signal = new AbortController().signal;
    await expect(loopback.onRedirect(authorizationUrl('http://127.0.0.1:1/elsewhere'), signal)).rejects.toBeInstanceOf(
      ConfigError,
    );
    await expect(loopback.onRedirect(new URL('file:///etc/passwd'), signal)).rejects.toBeInstanceOf(ConfigError);
  });
});

describe('defaultOpenBrowser', () => {
  it('refuses URLs that are not http(s)', () => {
    expect(() => defaultOpenBrowser(new URL('file:///etc/passwd'))).toThrow(ConfigError);
    expect(() => defaultOpenBrowser(new URL('javascript:alert(1)'))).toThrow(ConfigError);
  });
});
