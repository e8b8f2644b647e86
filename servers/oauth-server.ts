// A node:http OAuth 2.1 authorization server + protected MCP resource on 127.0.0.1 for tests,
// with switches mirroring the conformance `auth/*` variants. Records every request it receives.
// Test fixture code only: it checks what a strict server checks, and says why it refuses.
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, verify, type KeyObject } from 'node:crypto';
import { listenOnLoopback, readBody } from './listen.js';

export interface OAuthFixtureOptions {
  /** Where the PRM lives: path-based (default), the root, a custom path, or nowhere (2025-03-26). */
  prm?: 'path' | 'root' | 'custom' | 'none';
  /** Put `resource_metadata` in the 401 challenge. Default true. */
  prmInHeader?: boolean;
  /** Override the PRM `resource` (default: the MCP URL, or the origin for a root PRM); `{origin}` is replaced. */
  prmResource?: string;
  prmScopes?: string[];
  /** Issuer path, e.g. '/tenant1' (default none). */
  issuerPath?: string;
  /** Which well-known document serves AS metadata. Default 'oauth' (RFC 8414 path insertion). */
  asMetadata?: 'oauth' | 'openid' | 'openid-suffix' | 'none';
  asScopes?: string[];
  /** null = omit code_challenge_methods_supported. Default ['S256']. */
  codeChallengeMethods?: string[] | null;
  cimd?: boolean;
  /** Offer dynamic registration. Default true. */
  dcr?: boolean;
  authMethods?: string[];
  grantTypes?: string[];
  /** Clients known without registration. */
  clients?: { id: string; secret?: string; publicKey?: KeyObject }[];
  /** `expires_in` of issued access tokens, in seconds. Default 3600. */
  expiresIn?: number;
  /** Issue rotating refresh tokens. */
  refreshTokens?: boolean;
  /** Scope named in the 401 challenge. */
  challengeScope?: string;
  /** Scopes every MCP request needs; a token without them gets 403 insufficient_scope. */
  requiredScopes?: string[];
  /** Scopes `tools/call` needs (step-up). */
  callScopes?: string[];
  /** Answer 403 insufficient_scope to every authorized request, whatever the token. */
  alwaysInsufficient?: boolean;
  /** Redirect from /authorize with this error instead of a code. */
  authorizeError?: string;
  /**
   * RFC 9207: 'advertised' lists authorization_response_iss_parameter_supported and sends `iss`;
   * 'advertised-missing' lists it but leaves `iss` out (what a mix-up attacker's redirect looks like).
   */
  iss?: 'advertised' | 'advertised-missing';
  /** Redirect with a different state than requested. */
  wrongState?: boolean;
  /** RFC 7009: advertise `revocation_endpoint` and revoke what it is sent. */
  revocation?: boolean;
  /** SEP-1933: accept jwt-bearer grants whose assertion this key signed (ES256) with aud = the issuer. */
  workloadKey?: KeyObject;
  /** Make the token endpoint answer this OAuth error (with a description echoing the request). */
  tokenError?: string;
}

export interface RecordedOAuthRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  form?: Record<string, string>;
  json?: any;
}

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

/** Just enough MCP for a real client: initialize, notifications, tools/list and an echoing tools/call, `{}` otherwise. */
export function answerMcp(res: ServerResponse, message: any): void {
  if (message && typeof message === 'object' && !('id' in message)) {
    res.writeHead(202).end();
    return;
  }
  const method = message?.method;
  const result =
    method === 'initialize'
      ? {
          protocolVersion: '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'oauth-fixture', version: '1.0.0' },
        }
      : method === 'tools/call'
        ? { content: [{ type: 'text', text: String(message.params?.arguments?.text ?? '') }] }
        : method === 'tools/list'
          ? { tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }] }
          : {};
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: message?.id ?? null, result }));
}

export async function startOAuthServer(options: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
  const o = {
    prm: 'path' as const,
    prmInHeader: true,
    asMetadata: 'oauth' as const,
    codeChallengeMethods: ['S256'] as string[] | null,
    dcr: true,
    authMethods: ['none'],
    issuerPath: '',
    ...options,
  };
  const requests: RecordedOAuthRequest[] = [];
  const clients = new Map<
    string,
    { secret?: string | undefined; publicKey?: KeyObject | undefined; method?: string; issuerPath?: string }
  >();
  /** A registration is only good at the authorization server that made it (SEP-2352). */
  const knownClient = (id: string) => {
    const entry = clients.get(id);
    return entry && (entry.issuerPath === undefined || entry.issuerPath === p) ? entry : undefined;
  };
  for (const c of options.clients ?? []) clients.set(c.id, { secret: c.secret, publicKey: c.publicKey });
  const codes = new Map<
    string,
    { clientId: string; challenge?: string; redirectUri: string; scope?: string; resource?: string }
  >();
  const accessTokens = new Map<string, string[]>();
  const refreshTokens = new Map<string, { clientId: string; scope: string[] }>();
  const jags = new Map<string, string>();
  let counter = 0;
  let origin = '';
  let p = o.issuerPath;
  const prmPath =
    o.prm === 'path'
      ? '/.well-known/oauth-protected-resource/mcp'
      : o.prm === 'root'
        ? '/.well-known/oauth-protected-resource'
        : o.prm === 'custom'
          ? '/custom/metadata/location.json'
          : undefined;
  const asMetadataPath = () =>
    o.asMetadata === 'oauth'
      ? `/.well-known/oauth-authorization-server${p}`
      : o.asMetadata === 'openid'
        ? `/.well-known/openid-configuration${p}`
        : o.asMetadata === 'openid-suffix'
          ? `${p}/.well-known/openid-configuration`
          : undefined;

  const publishedResource = () =>
    o.prmResource?.replace('{origin}', origin) ?? (o.prm === 'root' ? origin : `${origin}/mcp`);
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const oauthError = (res: ServerResponse, status: number, error: string, description: string) =>
    json(res, status, { error, error_description: description });

  const issue = (scope: string[], clientId: string) => {
    const access = `at-${++counter}`;
    accessTokens.set(access, scope);
    const body: Record<string, unknown> = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: o.expiresIn ?? 3600,
      ...(scope.length ? { scope: scope.join(' ') } : {}),
    };
    if (o.refreshTokens) {
      const refresh = `rt-${counter}`;
      refreshTokens.set(refresh, { clientId, scope });
      body['refresh_token'] = refresh;
    }
    return body;
  };

  /** Which client authenticated, or why not (RFC 6749 §2.3, RFC 7523). */
  const authenticate = (
    req: IncomingMessage,
    form: Record<string, string>,
  ): { clientId: string } | { error: string } => {
    const header = req.headers.authorization;
    if (header?.startsWith('Basic ')) {
      const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) return { error: 'Basic credentials without a colon' };
      const id = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
      const secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
      if (!o.authMethods.includes('client_secret_basic')) return { error: 'client_secret_basic not supported' };
      return knownClient(id)?.secret === secret ? { clientId: id } : { error: 'bad Basic credentials' };
    }
    if (form['client_assertion']) {
      if (form['client_assertion_type'] !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
        return { error: 'bad client_assertion_type' };
      const [h, b, s] = form['client_assertion'].split('.');
      const header = JSON.parse(Buffer.from(h!, 'base64url').toString());
      const claims = JSON.parse(Buffer.from(b!, 'base64url').toString());
      const client = knownClient(claims.sub);
      if (!client?.publicKey || claims.iss !== claims.sub) return { error: 'unknown assertion client' };
      const es = String(header.alg).startsWith('ES');
      const ok = verify(
        `sha${String(header.alg).slice(2)}`,
        Buffer.from(`${h}.${b}`),
        { key: client.publicKey, ...(es ? { dsaEncoding: 'ieee-p1363' as const } : {}) },
        Buffer.from(s!, 'base64url'),
      );
      if (!ok) return { error: 'bad assertion signature' };
      if (claims.aud !== `${origin}${p}`) return { error: `assertion aud ${claims.aud}` };
      return { clientId: claims.sub };
    }
    const id = form['client_id'];
    if (!id) return { error: 'no client authentication' };
    if (form['client_secret'] !== undefined) {
      if (!o.authMethods.includes('client_secret_post')) return { error: 'client_secret_post not supported' };
      return knownClient(id)?.secret === form['client_secret'] ? { clientId: id } : { error: 'bad client_secret' };
    }
    const known = knownClient(id) ?? (o.cimd && id.startsWith('https://') ? {} : undefined);
    if (!known) return { error: 'unknown client' };
    if (known.secret) return { error: 'confidential client sent no secret' };
    return { clientId: id };
  };

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<unknown> => {
    const url = new URL(req.url ?? '/', origin);
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

    if (req.method === 'GET' && prmPath && path === prmPath) {
      return json(res, 200, {
        resource: publishedResource(),
        authorization_servers: [`${origin}${p}`],
        ...(o.prmScopes ? { scopes_supported: o.prmScopes } : {}),
      });
    }
    if (req.method === 'GET' && asMetadataPath() && path === asMetadataPath()) {
      return json(res, 200, {
        issuer: `${origin}${p}`,
        authorization_endpoint: `${origin}${p}/authorize`,
        token_endpoint: `${origin}${p}/token`,
        ...(o.dcr ? { registration_endpoint: `${origin}${p}/register` } : {}),
        response_types_supported: ['code'],
        grant_types_supported: o.grantTypes ?? ['authorization_code', 'refresh_token'],
        ...(o.codeChallengeMethods ? { code_challenge_methods_supported: o.codeChallengeMethods } : {}),
        token_endpoint_auth_methods_supported: o.authMethods,
        ...(o.asScopes ? { scopes_supported: o.asScopes } : {}),
        ...(o.cimd ? { client_id_metadata_document_supported: true } : {}),
        ...(o.iss ? { authorization_response_iss_parameter_supported: true } : {}),
        ...(o.revocation ? { revocation_endpoint: `${origin}${p}/revoke` } : {}),
      });
    }
    // Without metadata (asMetadata 'none') the 2025-03-26 default endpoints live at the origin.
    if (req.method === 'POST' && path === `${p}/register` && o.dcr) {
      const body = record.json ?? {};
      const id = `client-${++counter}`;
      const method = body.token_endpoint_auth_method ?? 'client_secret_basic';
      const secret = method === 'none' ? undefined : `secret-${counter}`;
      clients.set(id, { secret, method, issuerPath: p });
      return json(res, 201, {
        client_id: id,
        ...(secret ? { client_secret: secret } : {}),
        token_endpoint_auth_method: method,
        redirect_uris: body.redirect_uris,
      });
    }
    if (req.method === 'GET' && path === `${p}/authorize`) {
      const q = record.query;
      const client = q['client_id']
        ? (knownClient(q['client_id']) ?? (o.cimd && q['client_id'].startsWith('https://') ? {} : undefined))
        : undefined;
      if (!client || !q['redirect_uri'])
        return oauthError(res, 400, 'invalid_request', 'unknown client or no redirect_uri');
      const back = new URL(q['redirect_uri']);
      if (o.authorizeError) back.searchParams.set('error', o.authorizeError);
      else {
        const code = `code-${++counter}`;
        codes.set(code, {
          clientId: q['client_id']!,
          challenge: q['code_challenge'],
          redirectUri: q['redirect_uri'],
          scope: q['scope'],
          resource: q['resource'],
        });
        back.searchParams.set('code', code);
      }
      if (q['state']) back.searchParams.set('state', o.wrongState ? 'forged' : q['state']);
      if (o.iss === 'advertised') back.searchParams.set('iss', `${origin}${p}`);
      res.writeHead(302, { location: back.href }).end();
      return;
    }
    if (req.method === 'POST' && path === '/idp/token') {
      if (
        form['grant_type'] !== 'urn:ietf:params:oauth:grant-type:token-exchange' ||
        !form['subject_token'] ||
        !form['audience'] ||
        !form['resource']
      ) {
        return oauthError(res, 400, 'invalid_request', 'bad token exchange');
      }
      const jag = `jag-${++counter}`;
      jags.set(jag, form['resource']);
      return json(res, 200, {
        access_token: jag,
        issued_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
        token_type: 'N_A',
      });
    }
    if (req.method === 'POST' && path === `${p}/revoke` && o.revocation) {
      const who = authenticate(req, form);
      if ('error' in who) return oauthError(res, 401, 'invalid_client', who.error);
      accessTokens.delete(form['token'] ?? '');
      refreshTokens.delete(form['token'] ?? '');
      res.writeHead(200).end();
      return;
    }
    if (req.method === 'POST' && path === `${p}/token`) {
      if (o.tokenError)
        return oauthError(res, 400, o.tokenError, `refused ${JSON.stringify(form)} ${req.headers.authorization ?? ''}`);
      // RFC 7523 §3.1: a jwt-bearer grant may come without client authentication.
      const anonymousWorkload =
        o.workloadKey && form['grant_type'] === 'urn:ietf:params:oauth:grant-type:jwt-bearer' && !form['client_id'];
      const who = anonymousWorkload ? { clientId: 'workload' } : authenticate(req, form);
      if ('error' in who) return oauthError(res, 401, 'invalid_client', who.error);
      const grant = form['grant_type'];
      if (!form['resource']) return oauthError(res, 400, 'invalid_target', 'resource is required');
      // RFC 8707 with RFC 9728: the identifier exactly as the metadata publishes it.
      if (prmPath && form['resource'] !== publishedResource())
        return oauthError(res, 400, 'invalid_target', `resource ${form['resource']} is not ${publishedResource()}`);
      if (grant === 'authorization_code') {
        const entry = codes.get(form['code'] ?? '');
        codes.delete(form['code'] ?? '');
        if (!entry || entry.clientId !== who.clientId || entry.redirectUri !== form['redirect_uri'])
          return oauthError(res, 400, 'invalid_grant', 'bad code');
        if (
          entry.challenge &&
          createHash('sha256')
            .update(form['code_verifier'] ?? '')
            .digest('base64url') !== entry.challenge
        )
          return oauthError(res, 400, 'invalid_grant', 'PKCE mismatch');
        return json(res, 200, issue(entry.scope ? entry.scope.split(' ') : [], who.clientId));
      }
      if (grant === 'refresh_token') {
        const entry = refreshTokens.get(form['refresh_token'] ?? '');
        refreshTokens.delete(form['refresh_token'] ?? ''); // rotation: each refresh token works once
        if (!entry || entry.clientId !== who.clientId)
          return oauthError(res, 400, 'invalid_grant', 'refresh token unknown or used');
        return json(res, 200, issue(entry.scope, who.clientId));
      }
      if (grant === 'client_credentials')
        return json(res, 200, issue(form['scope'] ? form['scope'].split(' ') : [], who.clientId));
      if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer' && o.workloadKey) {
        const [h, b, sig] = String(form['assertion']).split('.');
        const claims = JSON.parse(Buffer.from(b ?? '', 'base64url').toString() || '{}');
        const signed = verify(
          'sha256',
          Buffer.from(`${h}.${b}`),
          { key: o.workloadKey, dsaEncoding: 'ieee-p1363' },
          Buffer.from(sig ?? '', 'base64url'),
        );
        if (!signed || claims.aud !== `${origin}${p}` || !(claims.exp > Date.now() / 1000))
          return oauthError(res, 400, 'invalid_grant', 'workload assertion refused');
        return json(res, 200, issue(form['scope'] ? form['scope'].split(' ') : [], claims.sub));
      }
      if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
        if (jags.get(form['assertion'] ?? '') !== `${origin}/mcp`)
          return oauthError(res, 400, 'invalid_grant', 'unknown ID-JAG');
        return json(res, 200, issue(form['scope'] ? form['scope'].split(' ') : [], who.clientId));
      }
      return oauthError(res, 400, 'unsupported_grant_type', String(grant));
    }
    if (req.method === 'POST' && path === '/mcp') {
      const challenge = (scope: string | undefined, error?: string) =>
        [
          'Bearer',
          [
            error ? `error="${error}"` : undefined,
            scope ? `scope="${scope}"` : undefined,
            prmPath && o.prmInHeader ? `resource_metadata="${origin}${prmPath}"` : undefined,
          ]
            .filter(Boolean)
            .join(', '),
        ].join(' ');
      const auth = req.headers.authorization;
      const scopes = auth?.startsWith('Bearer ') ? accessTokens.get(auth.slice(7)) : undefined;
      if (!scopes)
        return json(
          res,
          401,
          { error: 'invalid_token' },
          { 'www-authenticate': challenge(o.challengeScope, auth ? 'invalid_token' : undefined) },
        );
      const needed = [
        ...(o.requiredScopes ?? []),
        ...(record.json?.method === 'tools/call' ? (o.callScopes ?? []) : []),
      ];
      if (o.alwaysInsufficient || !needed.every((s) => scopes.includes(s))) {
        return json(
          res,
          403,
          { error: 'insufficient_scope' },
          { 'www-authenticate': challenge(needed.join(' ') || o.challengeScope, 'insufficient_scope') },
        );
      }
      return answerMcp(res, record.json);
    }
    json(res, 404, { error: 'not_found' });
  };
  const server = createServer((req, res) => {
    answer(req, res).catch((error: unknown) => json(res, 500, { error: String(error) }));
  });
  const listening = await listenOnLoopback(server);
  origin = listening.origin;
  return {
    origin,
    mcpUrl: `${origin}/mcp`,
    get issuer() {
      return `${origin}${p}`;
    },
    moveAuthorizationServer(issuerPath: string) {
      p = issuerPath;
      accessTokens.clear();
      refreshTokens.clear();
    },
    requests,
    gets: () => requests.filter((r) => r.method === 'GET').map((r) => r.path),
    tokenRequests: () =>
      requests.filter((r) => r.method === 'POST' && r.path.endsWith('/token') && !r.path.startsWith('/idp')),
    authorizeRequests: () => requests.filter((r) => r.path.endsWith('/authorize')),
    expireAccessTokens: () => accessTokens.clear(),
    close: () => listening.close(),
  };
}
