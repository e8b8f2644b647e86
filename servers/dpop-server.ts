// A node:http authorization server + MCP resource on 127.0.0.1 that require DPoP (RFC 9449):
// every token request and every /mcp request must carry a valid, fresh proof (checked with jose),
// tokens are bound to the proof key's thumbprint (cnf.jkt), and both servers can demand nonces.
// Test fixture code only: it records what it saw and says why it refuses.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, jwtVerify } from 'jose';
import { listenOnLoopback, readBody } from './listen.js';
import { answerMcp } from './oauth-server.js';

export interface DpopFixtureOptions {
  /** The token endpoint answers `400 use_dpop_nonce` to a proof without its current nonce. */
  asNonce?: boolean;
  /** /mcp answers `401 DPoP error="use_dpop_nonce"` to a proof without its current nonce. */
  rsNonce?: boolean;
  /** /mcp asks for a new nonce every time, whatever the proof carries (a server that never settles). */
  rsNonceNeverSettles?: boolean;
  /** Issue refresh tokens (bound to the proof key, as for a public client). */
  refreshTokens?: boolean;
  /** `dpop_signing_alg_values_supported`; default ['ES256']. */
  algorithms?: string[];
  /** Publish `dpop_bound_access_tokens_required: true` and challenge with `Bearer` only. */
  requiredInPrm?: boolean;
}

export interface RecordedProof {
  method: string;
  path: string;
  claims: Record<string, unknown>;
  jkt: string;
  /** The Authorization header's scheme, for /mcp requests. */
  scheme?: string | undefined;
}

export interface DpopFixture {
  origin: string;
  mcpUrl: string;
  /** Every proof the servers accepted or refused for a nonce, in order. */
  proofs: RecordedProof[];
  /** Why requests were refused (other than for a missing nonce), in order. */
  refusals: string[];
  nonceChallenges: { as: number; rs: number };
  tokenRequests: number;
  /** A new nonce for both servers: proofs with the old one are refused once more. */
  rotateNonces(): void;
  expireAccessTokens(): void;
  close(): Promise<void>;
}

/** The proof's checks of RFC 9449 §4.3, then the claims; throws a reason. */
async function verifyProof(
  proof: string | string[] | undefined,
  method: string,
  url: string,
): Promise<{ claims: Record<string, unknown>; jkt: string }> {
  if (typeof proof !== 'string' || proof.includes(',')) throw new Error('not exactly one DPoP header');
  const header = decodeProtectedHeader(proof);
  if (header.typ !== 'dpop+jwt') throw new Error(`typ ${String(header.typ)}`);
  const jwk = header.jwk;
  if (!jwk || 'd' in jwk) throw new Error('no public jwk in the header');
  const { payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: ['ES256'] });
  if (payload.htm !== method) throw new Error(`htm ${String(payload.htm)}`);
  if (payload.htu !== url) throw new Error(`htu ${String(payload.htu)}`);
  if (typeof payload.jti !== 'string') throw new Error('no jti');
  if (typeof payload.iat !== 'number' || Math.abs(payload.iat - Date.now() / 1000) > 60) throw new Error('iat');
  return { claims: payload, jkt: await calculateJwkThumbprint(jwk) };
}

export async function startDpopServer(options: DpopFixtureOptions = {}): Promise<DpopFixture> {
  let origin = '';
  let nonceRound = 1;
  const asNonce = () => `as-nonce-${nonceRound}`;
  const rsNonce = () => `rs-nonce-${nonceRound}`;
  const jtis = new Set<string>();
  const codes = new Map<string, { challenge: string }>();
  const accessTokens = new Map<string, string>(); // token -> jkt
  const refreshTokens = new Map<string, string>();
  let counter = 0;
  const fixture: DpopFixture = {
    origin: '',
    mcpUrl: '',
    proofs: [],
    refusals: [],
    nonceChallenges: { as: 0, rs: 0 },
    tokenRequests: 0,
    rotateNonces: () => void nonceRound++,
    expireAccessTokens: () => accessTokens.clear(),
    close: async () => {},
  };
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const prmUrl = () => `${origin}/.well-known/oauth-protected-resource/mcp`;
  const challenge = (error?: string) =>
    options.requiredInPrm
      ? `Bearer resource_metadata="${prmUrl()}"${error ? `, error="${error}"` : ''}`
      : `DPoP algs="ES256", resource_metadata="${prmUrl()}"${error ? `, error="${error}"` : ''}`;

  /** Checks a proof; on failure answers and returns undefined. */
  const proofOf = async (req: IncomingMessage, res: ServerResponse, url: string, status: number) => {
    try {
      const proof = await verifyProof(req.headers.dpop, req.method ?? '', url);
      if (jtis.has(proof.claims['jti'] as string)) throw new Error('jti replayed');
      jtis.add(proof.claims['jti'] as string);
      const scheme = req.headers.authorization?.split(' ')[0];
      fixture.proofs.push({ method: req.method ?? '', path: new URL(url).pathname, ...proof, scheme });
      return proof;
    } catch (error) {
      fixture.refusals.push(`${req.method} ${new URL(url).pathname}: ${(error as Error).message}`);
      if (status === 400) json(res, 400, { error: 'invalid_dpop_proof', error_description: String(error) });
      else json(res, 401, { error: 'invalid_dpop_proof' }, { 'www-authenticate': challenge('invalid_dpop_proof') });
      return undefined;
    }
  };

  const issue = (jkt: string) => {
    const access = `at-${++counter}`;
    accessTokens.set(access, jkt);
    const body: Record<string, unknown> = { access_token: access, token_type: 'DPoP', expires_in: 3600 };
    if (options.refreshTokens) {
      body['refresh_token'] = `rt-${counter}`;
      refreshTokens.set(`rt-${counter}`, jkt);
    }
    return body;
  };

  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<unknown> => {
    const url = new URL(req.url ?? '/', origin);
    const text = await readBody(req);
    const path = url.pathname;
    if (req.method === 'GET' && path === '/.well-known/oauth-protected-resource/mcp')
      return json(res, 200, {
        resource: `${origin}/mcp`,
        authorization_servers: [origin],
        ...(options.requiredInPrm ? { dpop_bound_access_tokens_required: true } : {}),
      });
    if (req.method === 'GET' && path === '/.well-known/oauth-authorization-server')
      return json(res, 200, {
        issuer: origin,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        registration_endpoint: `${origin}/register`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
        dpop_signing_alg_values_supported: options.algorithms ?? ['ES256'],
      });
    if (req.method === 'POST' && path === '/register')
      return json(res, 201, { client_id: `client-${++counter}`, token_endpoint_auth_method: 'none' });
    if (req.method === 'GET' && path === '/authorize') {
      const back = new URL(url.searchParams.get('redirect_uri')!);
      const code = `code-${++counter}`;
      codes.set(code, { challenge: url.searchParams.get('code_challenge') ?? '' });
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      return res.writeHead(302, { location: back.href }).end();
    }
    if (req.method === 'POST' && path === '/token') {
      fixture.tokenRequests++;
      const proof = await proofOf(req, res, `${origin}/token`, 400);
      if (!proof) return;
      if (options.asNonce && proof.claims['nonce'] !== asNonce()) {
        fixture.nonceChallenges.as++;
        return json(res, 400, { error: 'use_dpop_nonce' }, { 'dpop-nonce': asNonce() });
      }
      const form = Object.fromEntries(new URLSearchParams(text));
      if (form['grant_type'] === 'authorization_code') {
        const entry = codes.get(form['code'] ?? '');
        codes.delete(form['code'] ?? '');
        const verifier = createHash('sha256')
          .update(form['code_verifier'] ?? '')
          .digest('base64url');
        if (!entry || entry.challenge !== verifier) return json(res, 400, { error: 'invalid_grant' });
        return json(res, 200, issue(proof.jkt));
      }
      if (form['grant_type'] === 'refresh_token') {
        const bound = refreshTokens.get(form['refresh_token'] ?? '');
        refreshTokens.delete(form['refresh_token'] ?? '');
        // RFC 9449 §5: a public client's refresh token only works with the key it was bound to.
        if (bound !== proof.jkt) return json(res, 400, { error: 'invalid_grant' });
        return json(res, 200, issue(proof.jkt));
      }
      return json(res, 400, { error: 'unsupported_grant_type' });
    }
    if (path === '/mcp') {
      const auth = req.headers.authorization;
      if (!auth) return json(res, 401, { error: 'unauthorized' }, { 'www-authenticate': challenge() });
      const proof = await proofOf(req, res, `${origin}/mcp`, 401);
      if (!proof) return;
      const [scheme, token = ''] = auth.split(' ');
      const hash = createHash('sha256').update(token).digest('base64url');
      if (scheme !== 'DPoP' || accessTokens.get(token) !== proof.jkt || proof.claims['ath'] !== hash) {
        fixture.refusals.push(`${req.method} /mcp: token not bound to the proof`);
        return json(res, 401, { error: 'invalid_token' }, { 'www-authenticate': challenge('invalid_token') });
      }
      if (options.rsNonceNeverSettles) nonceRound++;
      if ((options.rsNonce || options.rsNonceNeverSettles) && proof.claims['nonce'] !== rsNonce()) {
        fixture.nonceChallenges.rs++;
        return json(
          res,
          401,
          { error: 'use_dpop_nonce' },
          { 'www-authenticate': 'DPoP error="use_dpop_nonce"', 'dpop-nonce': rsNonce() },
        );
      }
      if (req.method === 'GET') return res.writeHead(405).end();
      if (req.method === 'DELETE') return res.writeHead(204).end();
      return answerMcp(res, JSON.parse(text));
    }
    json(res, 404, { error: 'not_found' });
  };
  const server = createServer((req, res) => {
    answer(req, res).catch((error: unknown) => json(res, 500, { error: String(error) }));
  });
  const listening = await listenOnLoopback(server);
  origin = listening.origin;
  fixture.origin = origin;
  fixture.mcpUrl = `${origin}/mcp`;
  fixture.close = () => listening.close();
  return fixture;
}
