/**
 * The browser half of an interactive OAuth authorization for CLIs, in the loopback style of
 * RFC 8252 §7.3: a small HTTP server on the loopback interface receives the authorization
 * server's redirect, so the user only has to approve in the browser.
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { AuthorizationError, ConfigError, describeError } from '../core/errors.js';

export interface LoopbackRedirectOptions {
  /** The port to listen on; 0 (the default) picks a free one. */
  port?: number;
  /**
   * The host name in `redirectUri`. `'127.0.0.1'` (the default, as RFC 8252 §8.3 recommends) or
   * `'localhost'` for authorization servers that only accept that name; with `'localhost'` the
   * listener binds 127.0.0.1 and also ::1 when the machine has IPv6 loopback.
   */
  host?: '127.0.0.1' | 'localhost';
  /** The callback path; `/callback` by default. */
  path?: string;
  /** Opens the authorization URL, e.g. `defaultOpenBrowser`. None by default: the URL is only printed. */
  open?: (url: URL) => void | Promise<void>;
  /** Shows a line to the user; by default writes it to stderr (stdout may be a protocol stream). */
  print?: (line: string) => void;
  /** How long `onRedirect` waits for the browser; 5 minutes by default. */
  timeoutMs?: number;
  /** The page the browser shows after a successful redirect. */
  successHtml?: string;
}

export interface LoopbackRedirect {
  /** The URI to register with the authorization server, e.g. `http://127.0.0.1:53682/callback`. */
  readonly redirectUri: string;
  /**
   * Shows (and with `open`, opens) `authorizationUrl`, then resolves with the full callback URL
   * once the browser arrives at `redirectUri`: its query carries `code` and `state`, or `error`
   * (a denial resolves too; judging the answer, including `state`, is the OAuth client's job).
   * A redirect whose `state` differs from the one in `authorizationUrl` (a stale tab from an
   * earlier attempt), or that has neither `code` nor `error`, is answered 400 and the wait goes on.
   *
   * Rejects with an `AuthorizationError` when `signal` aborts, after `timeoutMs`, when the
   * listener is closed, or at once when another authorization is already waiting: one at a time,
   * and a second call does not replace the first (the first user's browser tab would then land
   * on a flow that no longer exists). Rejects with a `ConfigError` for an authorization URL that
   * is not http(s) or whose `redirect_uri` parameter is not this listener's.
   */
  onRedirect: (authorizationUrl: URL, signal: AbortSignal) => Promise<URL>;
  /** Stops the server (rejecting a waiting `onRedirect`) and frees the port. Idempotent. */
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 5 * 60_000;
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Pending {
  /** The `state` sent in the authorization URL, when it had one. */
  state: string | null;
  resolve(callback: URL): void;
  reject(error: Error): void;
}

/**
 * Starts listening and resolves once the port is bound (a busy port or bad option rejects with
 * `ConfigError`). Answers only requests whose `Host` is the loopback (not a DNS-rebound name):
 * the callback path with an HTML page, anything else with 404. The server does not keep the
 * process alive while no authorization is waiting, but call `close()` when done.
 */
export async function createLoopbackRedirect(options: LoopbackRedirectOptions = {}): Promise<LoopbackRedirect> {
  const { port = 0, host = '127.0.0.1', path = '/callback', timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  const print = options.print ?? ((line: string) => void process.stderr.write(`${line}\n`));
  checkOptions(port, host, path, timeoutMs);

  let pending: Pending | undefined;
  let closing: Promise<void> | undefined;
  const handle = (request: IncomingMessage, response: ServerResponse) => {
    try {
      answer(request, response);
    } catch {
      if (!response.headersSent) send(response, 400, page('Bad request', 'The request could not be read.'));
    }
  };

  const primary = createServer(handle);
  await listen(primary, port, '127.0.0.1');
  const boundPort = (primary.address() as { port: number }).port;
  const redirectUri = `http://${host}:${boundPort}${path}`;
  // Only requests addressed to the loopback by name get an answer: a web page cannot reach the
  // listener through a DNS-rebound name of its own.
  const loopbackHosts = new Set([`127.0.0.1:${boundPort}`, `localhost:${boundPort}`, `[::1]:${boundPort}`]);
  const servers: Server[] = [primary];
  if (host === 'localhost') {
    // Browsers may resolve localhost to ::1 first; without IPv6 loopback 127.0.0.1 alone serves.
    const secondary = createServer(handle);
    if (
      await listen(secondary, boundPort, '::1').then(
        () => true,
        () => false,
      )
    )
      servers.push(secondary);
  }
  for (const server of servers) server.unref();

  function answer(request: IncomingMessage, response: ServerResponse): void {
    if (!loopbackHosts.has((request.headers.host ?? '').toLowerCase()))
      return send(response, 400, page('Bad request', 'Unexpected host.'));
    const url = new URL(request.url ?? '/', redirectUri);
    if (url.pathname !== path) return send(response, 404, page('Not found', 'Nothing here.'));
    if (request.method !== 'GET') return send(response, 405, page('Method not allowed', 'Only GET.'), { allow: 'GET' });
    if (!pending)
      return send(
        response,
        400,
        page('No authorization in progress', 'Nothing is waiting for this answer. You can close this window.'),
      );
    const params = url.searchParams;
    const error = params.get('error');
    if (error === null && !params.has('code'))
      return send(
        response,
        400,
        page('Not an authorization response', 'This address expects the authorization server’s redirect.'),
      );
    // A stale tab from an earlier attempt must not end (or feed a wrong code to) the current one.
    if (pending.state !== null && params.has('state') && params.get('state') !== pending.state) {
      return send(
        response,
        400,
        page(
          'Outdated authorization response',
          'This answer belongs to an earlier attempt. Please use the most recent browser tab.',
        ),
      );
    }
    if (error === null)
      send(
        response,
        200,
        options.successHtml ??
          page('Authorization complete', 'You can close this window and return to the application.'),
      );
    else send(response, 200, page('Authorization failed', describeOAuthError(error, params.get('error_description'))));
    pending.resolve(url);
  }

  async function onRedirect(authorizationUrl: URL, signal: AbortSignal): Promise<URL> {
    if (
      !(authorizationUrl instanceof URL) ||
      (authorizationUrl.protocol !== 'https:' && authorizationUrl.protocol !== 'http:')
    ) {
      throw new ConfigError('the authorization URL must be an http(s) URL');
    }
    const registered = authorizationUrl.searchParams.get('redirect_uri');
    if (registered !== null && registered !== redirectUri) {
      throw new ConfigError(
        `the authorization URL's redirect_uri is not ${redirectUri}, so the browser would never come back to this listener`,
      );
    }
    if (closing) throw new AuthorizationError('the loopback redirect listener is closed', { fatal: false });
    if (pending)
      throw new AuthorizationError('another authorization is already waiting for the browser', { fatal: false });
    if (signal.aborted) throw aborted(signal);

    print(`Open this URL in your browser to authorize: ${authorizationUrl.href}`);
    const callback = new Promise<URL>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        pending = undefined;
        for (const server of servers) server.unref();
      };
      const onAbort = () => current.reject(aborted(signal));
      const timer = setTimeout(() => {
        current.reject(
          new AuthorizationError(`no authorization response arrived at ${redirectUri} within ${timeoutMs} ms`, {
            fatal: false,
          }),
        );
      }, timeoutMs);
      const current: Pending = {
        state: authorizationUrl.searchParams.get('state'),
        resolve: (url) => {
          settle();
          resolve(url);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      pending = current;
      signal.addEventListener('abort', onAbort, { once: true });
      // While a person is expected in the browser, the process must stay up for the answer.
      for (const server of servers) server.ref();
    });
    if (options.open) {
      const open = options.open;
      // A browser that cannot be opened is no reason to fail: the URL is printed above.
      void Promise.resolve()
        .then(() => open(new URL(authorizationUrl.href)))
        .catch((error: unknown) =>
          print(`Could not open a browser (${describeError(error)}); open the URL above yourself.`),
        );
    }
    return callback;
  }

  function close(): Promise<void> {
    closing ??= (async () => {
      pending?.reject(new AuthorizationError('the loopback redirect listener was closed', { fatal: false }));
      await Promise.all(servers.map(stop));
    })();
    return closing;
  }

  return { redirectUri, onRedirect, close };
}

/**
 * Opens `url` in the system browser (`open` on macOS, `rundll32 url.dll,FileProtocolHandler` on
 * Windows, which unlike `cmd /c start` does not reparse `&` and `%`, else `xdg-open`), detached;
 * failures are ignored because the URL is printed anyway. Only http(s) URLs: the authorization
 * endpoint comes from remote metadata and must not open files or other handlers.
 */
export function defaultOpenBrowser(url: URL): void {
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ConfigError('only http(s) URLs are opened in the browser');
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url.href]]
      : process.platform === 'win32'
        ? ['rundll32', ['url.dll,FileProtocolHandler', url.href]]
        : ['xdg-open', [url.href]];
  try {
    const child = spawn(command, args, { detached: true, stdio: 'ignore' });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // no browser: the printed URL is the fallback
  }
}

function checkOptions(port: number, host: string, path: string, timeoutMs: number): void {
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new ConfigError(`loopback redirect: port must be an integer from 0 to 65535, not ${String(port)}`);
  if (host !== '127.0.0.1' && host !== 'localhost')
    throw new ConfigError(`loopback redirect: host must be '127.0.0.1' or 'localhost', not ${JSON.stringify(host)}`);
  if (
    typeof path !== 'string' ||
    !/^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$/.test(path) ||
    new URL(path, 'http://127.0.0.1').pathname !== path
  ) {
    throw new ConfigError(
      `loopback redirect: path must be an absolute, normalised URL path such as '/callback', not ${JSON.stringify(path)}`,
    );
  }
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMER_MS)
    throw new ConfigError(
      `loopback redirect: timeoutMs must be a positive integer of milliseconds, not ${String(timeoutMs)}`,
    );
}

function listen(server: Server, port: number, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error & { code?: string }) => {
      reject(
        new ConfigError(`loopback redirect: cannot listen on ${address}:${port} (${error.code ?? error.message})`),
      );
    };
    server.once('error', onError);
    server.listen({ port, host: address, exclusive: true }, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

function stop(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    // A browser's idle keep-alive connection would otherwise hold the port.
    server.closeAllConnections();
  });
}

function aborted(signal: AbortSignal): AuthorizationError {
  return new AuthorizationError('the authorization was aborted', { fatal: false, cause: signal.reason });
}

function send(response: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  response.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    // The page's URL holds the authorization code: keep it out of caches and Referer headers.
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    connection: 'close',
    ...headers,
  });
  response.end(html);
}

function describeOAuthError(error: string, description: string | null): string {
  return `The authorization server answered “${error}”${description ? `: ${description}` : ''}. You can close this window.`;
}

function page(title: string, message: string): string {
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>\n<body style="font-family: sans-serif; margin: 3em"><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>\n`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
