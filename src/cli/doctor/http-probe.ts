/**
 * `doctor`'s HTTP steps for a URL server: one `initialize` POST, as a client would send it, with
 * the configured headers; the answer's status, content type and `WWW-Authenticate` tell whether
 * the path is an MCP endpoint, a legacy HTTP+SSE server, or one that wants authorization. A
 * session the probe opened is closed again (DELETE).
 */
import { request } from 'undici';
import { VERSION } from '../../core/version.js';
import { describe, fail, ok, since, warn, type Step } from './step.js';

export interface HttpProbe {
  http: Step;
  authorization: Step;
}

interface Target {
  url: URL;
  headers: Record<string, string>;
  /** The built-in OAuth client is configured (`auth`). */
  oauth: boolean;
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'mcp-supervisor-doctor', version: VERSION },
  },
});

function hasAuthorization(headers: Record<string, string>): boolean {
  return Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** A GET with `Accept: text/event-stream` answered by an event stream: a legacy HTTP+SSE endpoint. */
async function isLegacySse(target: Target, timeoutMs: number): Promise<boolean> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await request(target.url, {
      method: 'GET',
      headers: { ...target.headers, accept: 'text/event-stream' },
      signal: controller.signal,
    });
    const legacy =
      response.statusCode === 200 && /text\/event-stream/.test(header(response.headers, 'content-type') ?? '');
    discard(response.body);
    return legacy;
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/** Stops reading a body (an event stream may never end); its abort error is expected. */
function discard(body: { on(event: 'error', listener: () => void): unknown; destroy(): unknown }): void {
  body.on('error', () => {});
  body.destroy();
}

function authorizationStep(status: number, target: Target, challenge: string | undefined): Step {
  const metadata = /resource_metadata="?([^",\s]+)/.exec(challenge ?? '')?.[1];
  const where = metadata ? ` (protected resource metadata: ${metadata})` : '';
  if (status === 403)
    return fail(
      'authorization',
      `HTTP 403: the credentials are valid but not enough${challenge ? ` (${challenge})` : ''}`,
      'ask for a token with the scope the server names, or for access to this server',
    );
  if (status !== 401)
    return ok(
      'authorization',
      hasAuthorization(target.headers) ? 'the Authorization header was accepted' : 'none asked for',
    );
  if (target.oauth)
    return ok('authorization', `HTTP 401${where}: the built-in OAuth client signs in (see the initialize step)`);
  if (hasAuthorization(target.headers))
    return fail(
      'authorization',
      `HTTP 401: the server refused the Authorization header${where}`,
      'the token may have expired or belong to another server: get a new one, or use the built-in OAuth client ("auth": {} in the config, --oauth with --url)',
    );
  return fail(
    'authorization',
    `HTTP 401: the server wants authorization${where}`,
    'add "auth": {} to the server entry (the built-in OAuth 2.1 client; --oauth with --url), or a token in "headers": { "Authorization": "Bearer …" }',
  );
}

async function closeSession(target: Target, sessionId: string): Promise<void> {
  try {
    const response = await request(target.url, {
      method: 'DELETE',
      headers: { ...target.headers, 'mcp-session-id': sessionId },
    });
    await response.body.dump();
  } catch {
    // The session expires on its own.
  }
}

export async function probeHttp(target: Target, timeoutMs: number): Promise<HttpProbe> {
  const path = target.url.pathname;
  const start = performance.now();
  let response;
  try {
    response = await request(target.url, {
      method: 'POST',
      headers: {
        ...target.headers,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: INITIALIZE,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
  } catch (error) {
    const http = fail(
      'HTTP',
      `POST ${path}: ${describe(error)}`,
      'the server accepted the connection but not an HTTP request: is this the right port?',
    );
    return { http, authorization: { name: 'authorization', outcome: 'skip', detail: 'no HTTP answer' } };
  }
  const status = response.statusCode;
  const type = header(response.headers, 'content-type') ?? 'no content type';
  const sessionId = header(response.headers, 'mcp-session-id');
  const challenge = header(response.headers, 'www-authenticate');
  const location = header(response.headers, 'location');
  const text = status >= 400 ? (await response.body.text()).slice(0, 200) : (discard(response.body), '');
  if (sessionId) await closeSession(target, sessionId);
  const line = `POST ${path} → ${status} (${type}, ${since(start)})`;
  const authorization = authorizationStep(status, target, challenge);
  if (status >= 200 && status < 300) return { http: ok('HTTP', line), authorization };
  if (status === 401 || status === 403)
    return { http: ok('HTTP', `${line}: an endpoint that asks for credentials`), authorization };
  if (status >= 300 && status < 400)
    return {
      http: fail(
        'HTTP',
        `${line}: redirected to ${location ?? '?'}`,
        `use the URL it redirects to${location ? ` (${location})` : ''} in the config`,
      ),
      authorization,
    };
  if (status >= 500)
    return {
      http: fail(
        'HTTP',
        `${line}: ${text || 'a server error'}`,
        "the server failed on an initialize request: look at the server's own log",
      ),
      authorization,
    };
  if ((status === 404 || status === 405 || status === 400) && (await isLegacySse(target, timeoutMs)))
    return {
      http: warn(
        'HTTP',
        `${line}; GET ${path} answers an event stream: a legacy HTTP+SSE server`,
        `"type": "auto" (the default) falls back to it; "type": "sse" skips the probe`,
      ),
      authorization,
    };
  if (status === 404)
    return {
      http: fail(
        'HTTP',
        `${line}: no MCP endpoint at ${path}`,
        'check the path: MCP servers usually answer at /mcp (legacy HTTP+SSE ones at /sse)',
      ),
      authorization,
    };
  // A JSON-RPC error (an unsupported version, say) still proves an MCP endpoint: the session steps tell more.
  if (/"jsonrpc"/.test(text))
    return { http: ok('HTTP', `${line}: an MCP endpoint (it answered ${text.replace(/\s+/g, ' ')})`), authorization };
  return {
    http: fail(
      'HTTP',
      `${line}${text ? `: ${text.replace(/\s+/g, ' ')}` : ''}`,
      'this URL does not look like an MCP endpoint: check the path, and that no proxy answers in its place',
    ),
    authorization,
  };
}
