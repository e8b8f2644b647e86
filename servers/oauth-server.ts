// A node:http OAuth 2.1 authorization server + protected MCP resource on 127.0.0.1 for tests,
// with switches mirroring the conformance `auth/*` variants. Records every request it receives.
// Test fixture code only: it checks what a strict server checks, and says why it refuses.
// Its parts live in oauth/: the options, discovery metadata, the client registry, the
// authorization endpoint, the token endpoint (by grant), the protected resource.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { listenOnLoopback, readBody } from './listen.js';
import { createAuthorizationEndpoint } from './oauth/authorize.js';
import { createClients } from './oauth/clients.js';
import { issuerOf, json, type OAuthContext, type RecordedOAuthRequest } from './oauth/context.js';
import { createMetadata } from './oauth/metadata.js';
import { withDefaults, type OAuthFixtureOptions } from './oauth/options.js';
import { createProtectedResource } from './oauth/resource.js';
import { createTokenEndpoint, type TokenCounts } from './oauth/tokens.js';

export type { OAuthFixtureOptions } from './oauth/options.js';
export type { RecordedOAuthRequest } from './oauth/context.js';
export type { TokenCounts } from './oauth/tokens.js';
export { answerMcp } from './oauth/resource.js';

export interface OAuthFixture {
  origin: string;
  mcpUrl: string;
  readonly issuer: string;
  requests: RecordedOAuthRequest[];
  /** Paths of GET requests, in order. */
  gets(): string[];
  tokenRequests(): RecordedOAuthRequest[];
  authorizeRequests(): RecordedOAuthRequest[];
  /**
   * SEP-2352: the PRM names a new authorization server at this path of the same origin; every
   * token is invalid, and registrations made at the old one are unknown at the new one.
   */
  moveAuthorizationServer(issuerPath: string): void;
  /** Invalidate every issued access token (as if they expired). */
  expireAccessTokens(): void;
  /** Refreshes, refresh-token reuses, sign-ins and revoked grants so far (a live view). */
  readonly counts: TokenCounts;
  /** The next `count` refreshes fail with `status` (503 by default): a transient failure. */
  failRefreshes(count: number, status?: number): void;
  /** From now on, hold each refresh this long; a client gone meanwhile has it dropped unprocessed. */
  delayRefreshes(ms: number): void;
  close(): Promise<void>;
}

/**
 * A headless browser whose user approves at once: GET the authorization URL without following
 * redirects and hand back where the authorization server sends the browser (its `Location`).
 * The `onRedirect` of tests, the demo and the conformance client.
 */
export async function approveAtOnce(authorizationUrl: URL, signal?: AbortSignal): Promise<string> {
  const { request } = await import('undici');
  const response = await request(authorizationUrl, { method: 'GET', signal });
  await response.body.dump();
  const location = response.headers.location;
  if (response.statusCode < 300 || response.statusCode >= 400 || typeof location !== 'string') {
    throw new Error(`the authorization endpoint answered ${response.statusCode} without a redirect`);
  }
  return new URL(location, authorizationUrl).href;
}

export async function startOAuthServer(options: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
  const o = withDefaults(options);
  const ctx: OAuthContext = { o, origin: '', issuerPath: o.issuerPath };
  const requests: RecordedOAuthRequest[] = [];
  /** One sequence for every id the fixture mints (clients, codes, tokens, ID-JAGs). */
  let counter = 0;
  const nextId = () => ++counter;
  const metadata = createMetadata(ctx);
  const clients = createClients(ctx, nextId);
  const codes = createAuthorizationEndpoint(ctx, clients, nextId);
  const tokens = createTokenEndpoint(ctx, { clients, codes, metadata, nextId });
  const resource = createProtectedResource(ctx, metadata, tokens);

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<unknown> => {
    const url = new URL(req.url ?? '/', ctx.origin);
    const text = await readBody(req);
    const record: RecordedOAuthRequest = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
    };
    const type = String(req.headers['content-type'] ?? '');
    if (type.startsWith('application/x-www-form-urlencoded'))
      record.form = Object.fromEntries(new URLSearchParams(text));
    if (type.startsWith('application/json') && text) record.json = JSON.parse(text);
    requests.push(record);
    const form = record.form ?? {};
    const path = url.pathname;
    const p = ctx.issuerPath;

    if (req.method === 'GET' && metadata.serve(path, res)) return;
    // Without metadata (asMetadata 'none') the 2025-03-26 default endpoints live at the origin.
    if (req.method === 'POST' && path === `${p}/register` && o.dcr) return clients.register(record, res);
    if (req.method === 'GET' && path === `${p}/authorize`) return codes.authorize(record.query, res);
    if (req.method === 'POST' && path === '/idp/token') return tokens.exchange(form, res);
    if (req.method === 'POST' && path === `${p}/revoke` && o.revocation) return tokens.revoke(req, form, res);
    if (req.method === 'POST' && path === `${p}/token`) return tokens.token(req, form, res);
    if (req.method === 'POST' && path === '/mcp') return resource(record, req.headers.authorization, res);
    json(res, 404, { error: 'not_found' });
  };
  const server = createServer((req, res) => {
    answer(req, res).catch((error: unknown) => json(res, 500, { error: String(error) }));
  });
  const listening = await listenOnLoopback(server);
  ctx.origin = listening.origin;
  return {
    origin: ctx.origin,
    mcpUrl: `${ctx.origin}/mcp`,
    get issuer() {
      return issuerOf(ctx);
    },
    moveAuthorizationServer(issuerPath: string) {
      ctx.issuerPath = issuerPath;
      tokens.forgetAll();
    },
    requests,
    gets: () => requests.filter((r) => r.method === 'GET').map((r) => r.path),
    tokenRequests: () =>
      requests.filter((r) => r.method === 'POST' && r.path.endsWith('/token') && !r.path.startsWith('/idp')),
    authorizeRequests: () => requests.filter((r) => r.path.endsWith('/authorize')),
    expireAccessTokens: () => tokens.expireAccessTokens(),
    counts: tokens.counts,
    failRefreshes: (count, status) => tokens.failRefreshes(count, status),
    delayRefreshes: (ms) => tokens.delayRefreshes(ms),
    close: () => listening.close(),
  };
}
