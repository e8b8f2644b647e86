/**
 * DPoP (RFC 9449, SEP-1932): a per-client ES256 key pair (Node's `crypto`), kept as a private JWK
 * with the tokens of the issuer it is bound to, and a fresh proof JWT (signed with `jose`) for every
 * token request and every request to the MCP server. Server nonces are remembered per origin.
 * The private key never leaves this module except as the stored JWK.
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomUUID,
  sign,
  verify,
  type JsonWebKeyInput,
  type KeyObject,
} from 'node:crypto';
import { SignJWT, type JWK } from 'jose';
import type { PrivateJwk } from './types.js';

/** The only algorithm this client signs proofs with (RFC 9449 §4.2 allows any asymmetric one). */
export const DPOP_ALGORITHM = 'ES256';

/** A fresh P-256 key pair as a private JWK (`kty`, `crv`, `x`, `y`, `d`): what the token store keeps. */
export function generateDpopKey(): PrivateJwk {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return privateKey.export({ format: 'jwk' });
}

const KEY_CHECK = Buffer.from('dpop key check');

/** True when `jwk` is a P-256 private key this client can sign with (a stored key may be damaged). */
export function isUsableDpopKey(jwk: unknown): jwk is PrivateJwk {
  try {
    const key = createPrivateKey({ key: jwk as JsonWebKeyInput['key'], format: 'jwk' });
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') return false;
    // The public half sent in proofs must verify what `d` signs (a JWK can hold a mismatched pair).
    const { kty, crv, x, y } = jwk as JsonWebKeyInput['key'];
    const publicKey = createPublicKey({ key: { kty, crv, x, y }, format: 'jwk' });
    return verify('sha256', KEY_CHECK, publicKey, sign('sha256', KEY_CHECK, key));
  } catch {
    return false;
  }
}

/** `htu` (RFC 9449 §4.2): the request URI without query and fragment. */
export function proofTarget(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** `ath` (RFC 9449 §4.2): base64url SHA-256 of the access token. */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest('base64url');
}

export interface ProofRequest {
  method: string;
  url: URL;
  /** For requests to the resource server: the token the proof is bound to (`ath`). */
  accessToken?: string | undefined;
  nonce?: string | undefined;
}

/** Signs proofs with one key. */
export class DpopProver {
  readonly #key: KeyObject;
  /** The public half, sent in every proof's `jwk` header; never the private `d`. */
  readonly #publicJwk: JWK;
  /** `ath` of the last token: one hash per token, not per request. */
  #ath: { token: string; hash: string } | undefined;

  constructor(privateJwk: PrivateJwk) {
    this.#key = createPrivateKey({ key: privateJwk, format: 'jwk' });
    const { kty, crv, x, y } = privateJwk;
    this.#publicJwk = { kty, crv, x, y };
  }

  proof(request: ProofRequest): Promise<string> {
    const claims: Record<string, string> = { htm: request.method, htu: proofTarget(request.url) };
    if (request.accessToken !== undefined) claims['ath'] = this.#hash(request.accessToken);
    if (request.nonce !== undefined) claims['nonce'] = request.nonce;
    return new SignJWT(claims)
      .setProtectedHeader({ alg: DPOP_ALGORITHM, typ: 'dpop+jwt', jwk: this.#publicJwk })
      .setIssuedAt()
      .setJti(randomUUID())
      .sign(this.#key);
  }

  #hash(token: string): string {
    if (this.#ath?.token !== token) this.#ath = { token, hash: accessTokenHash(token) };
    return this.#ath.hash;
  }
}

/** RFC 9449 §8: a nonce is NQCHAR (%x21 / %x23-5B / %x5D-7E); a bound on length keeps memory small. */
const NONCE = /^[\x21\x23-\x5B\x5D-\x7E]{1,512}$/;
const MAX_ORIGINS = 64;

/** The latest `DPoP-Nonce` of each origin (authorization server, resource server). */
export class DpopNonces {
  readonly #byOrigin = new Map<string, string>();

  get(url: URL): string | undefined {
    return this.#byOrigin.get(url.origin);
  }

  /** Keeps a nonce from a response's `DPoP-Nonce` header; malformed values are ignored. */
  remember(url: URL, header: string | string[] | undefined): boolean {
    const value = Array.isArray(header) ? header[0] : header;
    if (value === undefined || !NONCE.test(value)) return false;
    const origin = url.origin;
    this.#byOrigin.delete(origin);
    if (this.#byOrigin.size >= MAX_ORIGINS) this.#byOrigin.delete(this.#byOrigin.keys().next().value!);
    this.#byOrigin.set(origin, value);
    return true;
  }

  clear(): void {
    this.#byOrigin.clear();
  }
}

/** What a token request needs to carry a proof (HttpContext.dpop). */
export interface DpopSigner {
  prover: DpopProver;
  nonces: DpopNonces;
}

/** `error="use_dpop_nonce"`: the authorization or resource server wants a proof with its nonce. */
export const USE_DPOP_NONCE = 'use_dpop_nonce';
