/**
 * DPoP building blocks (RFC 9449): proofs checked with jose's own verification, nonces, the token
 * endpoint's nonce retry against a real node:http server, token responses, the key in the store.
 */
import { createHash, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, jwtVerify } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { CredentialBook } from '../../../src/auth/credential-book.js';
import {
  DpopNonces,
  DpopProver,
  generateDpopKey,
  isUsableDpopKey,
  proofTarget,
  type DpopSigner,
} from '../../../src/auth/dpop.js';
import { createOAuthProvider } from '../../../src/auth/oauth-provider.js';
import { parseTokenResponse, postTokenRequest } from '../../../src/auth/token-endpoint.js';
import { fileTokenStore, memoryTokenStore } from '../../../src/auth/token-store.js';
import { parseBearerChallenge } from '../../../src/auth/www-authenticate.js';
import { AuthorizationError } from '../../../src/core/errors.js';
import { HttpCredentials } from '../../../src/transports/http-credentials.js';
import { listenOnLoopback, readBody, type Listening } from '../../../servers/listen.js';

const verify = (proof: string) => jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: ['ES256'] });

describe('DPoP proofs', () => {
  it('are ES256 JWTs with the public key only, htm, htu without query or fragment, iat and a fresh jti', async () => {
    const key = generateDpopKey();
    const prover = new DpopProver(key);
    const url = new URL('https://mcp.example.com/mcp?tenant=1#frag');
    const first = await prover.proof({ method: 'POST', url });
    const second = await prover.proof({ method: 'POST', url });

    const header = decodeProtectedHeader(first);
    expect(header).toMatchObject({ alg: 'ES256', typ: 'dpop+jwt', jwk: { kty: 'EC', crv: 'P-256' } });
    expect(header.jwk).not.toHaveProperty('d');
    const { payload } = await verify(first);
    expect(payload).toMatchObject({ htm: 'POST', htu: 'https://mcp.example.com/mcp' });
    expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(5);
    expect(payload).not.toHaveProperty('ath');
    expect(payload).not.toHaveProperty('nonce');
    expect((await verify(second)).payload.jti).not.toBe(payload.jti);
    expect(await calculateJwkThumbprint(header.jwk!)).toBe(
      await calculateJwkThumbprint({ kty: key.kty!, crv: key.crv!, x: key.x!, y: key.y! }),
    );
  });

  it('bind to the access token (ath) and carry the server nonce when given', async () => {
    const prover = new DpopProver(generateDpopKey());
    const proof = await prover.proof({
      method: 'GET',
      url: new URL('https://mcp.example.com/mcp'),
      accessToken: 'token-1',
      nonce: 'n-1',
    });
    const { payload } = await verify(proof);
    expect(payload).toMatchObject({
      htm: 'GET',
      ath: createHash('sha256').update('token-1').digest('base64url'),
      nonce: 'n-1',
    });
  });

  it('does not verify under another key (the signature is real)', async () => {
    const proof = await new DpopProver(generateDpopKey()).proof({ method: 'POST', url: new URL('https://a.example') });
    const [, body, signature] = proof.split('.');
    const other = await new DpopProver(generateDpopKey()).proof({ method: 'POST', url: new URL('https://a.example') });
    const forged = `${other.split('.')[0]}.${body}.${signature}`;
    await expect(verify(forged)).rejects.toThrow();
  });

  it('htu is the origin and path', () => {
    expect(proofTarget(new URL('http://127.0.0.1:8080/a/mcp?x=1#y'))).toBe('http://127.0.0.1:8080/a/mcp');
  });

  it('keys: generated P-256 keys are usable; damaged or other keys are not', () => {
    expect(isUsableDpopKey(generateDpopKey())).toBe(true);
    expect(isUsableDpopKey({ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA', d: 'AAAA' })).toBe(false);
    expect(isUsableDpopKey('not a key')).toBe(false);
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).privateKey.export({ format: 'jwk' });
    expect(isUsableDpopKey(p384)).toBe(false);
  });
});

describe('DPoP nonces', () => {
  it('are kept per origin, replaced by newer ones, and malformed values are ignored', () => {
    const nonces = new DpopNonces();
    const as = new URL('https://auth.example.com/token');
    expect(nonces.remember(as, 'n1')).toBe(true);
    expect(nonces.remember(new URL('https://mcp.example.com/mcp'), ['m1', 'm2'])).toBe(true);
    expect(nonces.get(new URL('https://auth.example.com/other'))).toBe('n1');
    expect(nonces.get(new URL('https://mcp.example.com/x'))).toBe('m1');
    expect(nonces.remember(as, 'has "quote')).toBe(false);
    expect(nonces.remember(as, 'x'.repeat(600))).toBe(false);
    expect(nonces.remember(as, undefined)).toBe(false);
    expect(nonces.get(as)).toBe('n1');
    nonces.remember(as, 'n2');
    expect(nonces.get(as)).toBe('n2');
  });

  it('remember a bounded number of origins', () => {
    const nonces = new DpopNonces();
    for (let i = 0; i < 100; i++) nonces.remember(new URL(`https://h${i}.example.com`), `n${i}`);
    expect(nonces.get(new URL('https://h0.example.com'))).toBeUndefined();
    expect(nonces.get(new URL('https://h99.example.com'))).toBe('n99');
  });
});

describe('the token endpoint with DPoP', () => {
  let listening: Listening | undefined;
  afterEach(async () => {
    await listening?.close();
    listening = undefined;
  });

  /** A token endpoint that asks for a new nonce `times` times, then issues a DPoP token. */
  async function tokenEndpoint(times: number) {
    const seen: { proof: string; nonce: unknown }[] = [];
    let asked = 0;
    const server = createServer((req, res) => {
      void readBody(req).then(async () => {
        const proof = String(req.headers.dpop);
        const { payload } = await verify(proof);
        seen.push({ proof, nonce: payload['nonce'] });
        if (asked < times) {
          asked++;
          res.writeHead(400, { 'content-type': 'application/json', 'dpop-nonce': `nonce-${asked}` });
          return res.end(JSON.stringify({ error: 'use_dpop_nonce' }));
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: 'at', token_type: 'DPoP', expires_in: 60 }));
      });
    });
    listening = await listenOnLoopback(server);
    return { endpoint: new URL(`${listening.origin}/token`), seen };
  }
  const signer = (): DpopSigner => ({ prover: new DpopProver(generateDpopKey()), nonces: new DpopNonces() });
  const request = (endpoint: URL) => ({ what: 'test grant', endpoint, params: { grant_type: 'client_credentials' } });

  it('retries once with the nonce from a use_dpop_nonce answer', async () => {
    const { endpoint, seen } = await tokenEndpoint(1);
    const body = await postTokenRequest(request(endpoint), { server: 's', timeoutMs: 5000, dpop: signer() });
    expect(body['token_type']).toBe('DPoP');
    expect(seen.map((s) => s.nonce)).toEqual([undefined, 'nonce-1']);
    expect(seen[0]!.proof).not.toBe(seen[1]!.proof);
  });

  it('retries only once: a second nonce demand is an error naming it', async () => {
    const { endpoint, seen } = await tokenEndpoint(5);
    const error = await postTokenRequest(request(endpoint), { server: 's', timeoutMs: 5000, dpop: signer() }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AuthorizationError);
    expect((error as AuthorizationError).oauthError).toBe('use_dpop_nonce');
    expect(seen).toHaveLength(2);
  });

  it('accepts token_type DPoP only when a proof was sent', () => {
    const body = { access_token: 'a', token_type: 'DPoP' };
    expect(parseTokenResponse(body, 'grant', 's', undefined, true).token_type).toBe('DPoP');
    expect(parseTokenResponse({ ...body, token_type: 'bearer' }, 'grant', 's', undefined, true).token_type).toBe(
      'Bearer',
    );
    expect(() => parseTokenResponse(body, 'grant', 's')).toThrow(/no DPoP proof was sent/);
  });
});

describe('DPoP challenges', () => {
  it('reads a DPoP-only challenge, and prefers the DPoP one when the token is DPoP-bound', () => {
    expect(parseBearerChallenge('DPoP algs="ES256", resource_metadata="https://x/prm"')).toEqual({
      resourceMetadata: 'https://x/prm',
      scope: undefined,
      error: undefined,
      errorDescription: undefined,
      dpopOffered: true,
    });
    const both = 'Bearer resource_metadata="https://x/prm", DPoP error="invalid_token", algs="ES256"';
    expect(parseBearerChallenge(both).error).toBeUndefined();
    expect(parseBearerChallenge(both, true)).toMatchObject({
      error: 'invalid_token',
      resourceMetadata: 'https://x/prm',
    });
    expect(parseBearerChallenge('Bearer realm="x"').dpopOffered).toBeUndefined();
  });
});

describe('the DPoP key in the token store', () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });
  const issuer = 'https://auth.example.com';
  const dpopTokens = { access_token: 'at', token_type: 'DPoP', expires_at: Date.now() + 3_600_000 };

  it('round-trips per issuer through a file, and is not carried to another issuer', async () => {
    dir = await mkdtemp(join(tmpdir(), 'dpop-store-'));
    const file = join(dir, 'tokens.json');
    const key = generateDpopKey();
    const book = new CredentialBook();
    book.useIssuer(issuer);
    book.tokens = dpopTokens;
    book.dpopKey = key;
    await fileTokenStore(file).save('k', book.toStored());

    const loaded = new CredentialBook();
    loaded.load((await fileTokenStore(file).load('k'))!);
    expect(loaded.dpopKey).toEqual(key);
    expect(JSON.parse(await readFile(file, 'utf8')).k.issuers[issuer].dpopKey.d).toBe(key.d);
    loaded.useIssuer('https://other.example.com');
    expect(loaded.dpopKey).toBeUndefined();
    loaded.useIssuer(issuer);
    expect(loaded.dpopKey).toEqual(key);
  });

  it('reads a file of the version before DPoP (flat tokens) without a key and without losing the tokens', () => {
    const book = new CredentialBook();
    book.load({ issuer, tokens: { access_token: 'old', token_type: 'Bearer' }, client: { client_id: 'c' } });
    expect(book.tokens?.access_token).toBe('old');
    expect(book.dpopKey).toBeUndefined();
    expect(book.toStored()).toEqual({
      issuer,
      issuers: { [issuer]: { tokens: { access_token: 'old', token_type: 'Bearer' }, client: { client_id: 'c' } } },
    });
  });

  it('the provider proves with a stored key, and drops a damaged key with its tokens', async () => {
    const resourceUrl = new URL('https://mcp.example.com/mcp');
    const key = generateDpopKey();
    const good = memoryTokenStore();
    await good.save(resourceUrl.href, { issuer, issuers: { [issuer]: { tokens: dpopTokens, dpopKey: key } } });
    const provider = createOAuthProvider(
      { grant: 'client_credentials', clientId: 'c', clientSecret: 's', store: good },
      { resourceUrl, server: 'docs' },
    );
    await provider.ready();
    expect(provider.authorization()).toBe('DPoP at');
    const proof = await provider.proof!('POST', resourceUrl)!;
    const { protectedHeader } = await verify(proof);
    expect(protectedHeader.jwk!.x).toBe(key.x);

    const damaged = memoryTokenStore();
    const broken: JsonWebKey = { ...key, d: 'AAAA' };
    await damaged.save(resourceUrl.href, { issuer, issuers: { [issuer]: { tokens: dpopTokens, dpopKey: broken } } });
    const second = createOAuthProvider(
      { grant: 'client_credentials', clientId: 'c', clientSecret: 's', store: damaged },
      { resourceUrl, server: 'docs' },
    );
    await second.ready();
    expect(second.authorization()).toBeUndefined();
    expect(second.proof!('POST', resourceUrl)).toBeUndefined();
  });

  it('status never shows the key', async () => {
    const resourceUrl = new URL('https://mcp.example.com/mcp');
    const key = generateDpopKey();
    const store = memoryTokenStore();
    await store.save(resourceUrl.href, { issuer, issuers: { [issuer]: { tokens: dpopTokens, dpopKey: key } } });
    const provider = createOAuthProvider(
      { grant: 'client_credentials', clientId: 'c', clientSecret: 's', store },
      { resourceUrl, server: 'docs' },
    );
    await provider.ready();
    expect(JSON.stringify(provider.status?.())).not.toContain(key.d!);
  });
});

describe('transport credentials with DPoP', () => {
  it('keep any response’s nonce, and ask for one retry only on a 401 use_dpop_nonce', () => {
    const seen: string[] = [];
    const provider = {
      generation: 1,
      authorization: () => 'DPoP t',
      authorize: async () => {},
      rememberNonce: (url: URL, nonce: string | string[]) => void seen.push(`${url.origin} ${String(nonce)}`),
    };
    const url = new URL('https://mcp.example.com/mcp');
    const credentials = new HttpCredentials(provider, url, 'docs');
    expect(credentials.nonceRequested(200, { 'dpop-nonce': 'n1' }, url)).toBe(false);
    expect(
      credentials.nonceRequested(401, { 'www-authenticate': 'DPoP error="invalid_token"', 'dpop-nonce': 'n2' }, url),
    ).toBe(false);
    expect(
      credentials.nonceRequested(
        401,
        { 'www-authenticate': ['Bearer realm="x"', 'DPoP error="use_dpop_nonce"'], 'dpop-nonce': 'n3' },
        url,
      ),
    ).toBe(true);
    // Without a nonce to retry with, a use_dpop_nonce 401 is an ordinary refusal.
    expect(credentials.nonceRequested(401, { 'www-authenticate': 'DPoP error="use_dpop_nonce"' }, url)).toBe(false);
    expect(seen).toEqual(['https://mcp.example.com n1', 'https://mcp.example.com n2', 'https://mcp.example.com n3']);
  });
});

describe('transport credentials without DPoP', () => {
  it('sign() hands back the same headers object, with no promise (the hot path stays as it was)', () => {
    const headers = { accept: 'application/json' };
    const bearer = { generation: 1, authorization: () => 'Bearer t', authorize: async () => {} };
    const credentials = new HttpCredentials(bearer, new URL('https://mcp.example.com/mcp'), 'docs');
    expect(credentials.sign('POST', new URL('https://mcp.example.com/mcp'), headers)).toBe(headers);
    expect(
      new HttpCredentials(undefined, new URL('https://x'), 'docs').sign('GET', new URL('https://x'), headers),
    ).toBe(headers);
  });
});
