/**
 * Compact JWS signing with node:crypto (no JOSE dependency): RS*, PS*, ES* (raw r||s signatures,
 * as JWS requires, via `dsaEncoding: 'ieee-p1363'`) and EdDSA.
 */
import { createPrivateKey, randomUUID, sign, constants, type KeyObject } from 'node:crypto';

export const SIGNING_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

const CURVE_OF: Partial<Record<SigningAlgorithm, string>> = {
  ES256: 'prime256v1',
  ES384: 'secp384r1',
  ES512: 'secp521r1',
};

export function loadPrivateKey(pem: string): KeyObject {
  return createPrivateKey({ key: pem, format: 'pem' });
}

/** The algorithm a key signs with when none is configured; undefined when the key type has none. */
export function defaultAlgorithm(key: KeyObject): SigningAlgorithm | undefined {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return 'RS256';
    case 'rsa-pss':
      return 'PS256';
    case 'ed25519':
      return 'EdDSA';
    case 'ec': {
      const curve = key.asymmetricKeyDetails?.namedCurve;
      return curve === 'secp384r1'
        ? 'ES384'
        : curve === 'secp521r1'
          ? 'ES512'
          : curve === 'prime256v1'
            ? 'ES256'
            : undefined;
    }
    default:
      return undefined;
  }
}

/** Undefined when `key` can sign with `algorithm`, else why not. */
export function keyMismatch(key: KeyObject, algorithm: SigningAlgorithm): string | undefined {
  const type = key.asymmetricKeyType;
  if (algorithm.startsWith('RS') || algorithm.startsWith('PS'))
    return type === 'rsa' || type === 'rsa-pss' ? undefined : `${algorithm} needs an RSA key, not ${type}`;
  if (algorithm === 'EdDSA')
    return type === 'ed25519' || type === 'ed448' ? undefined : `EdDSA needs an Ed25519 key, not ${type}`;
  if (type !== 'ec') return `${algorithm} needs an EC key, not ${type}`;
  const curve = key.asymmetricKeyDetails?.namedCurve;
  return curve === CURVE_OF[algorithm]
    ? undefined
    : `${algorithm} needs the ${CURVE_OF[algorithm]} curve, not ${curve}`;
}

export function signJwt(
  payload: Record<string, unknown>,
  key: KeyObject,
  algorithm: SigningAlgorithm,
  keyId?: string,
): string {
  const header = { alg: algorithm, typ: 'JWT', ...(keyId ? { kid: keyId } : {}) };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
  const data = Buffer.from(input);
  const hash = algorithm === 'EdDSA' ? null : `sha${algorithm.slice(2)}`;
  let signature: Buffer;
  if (algorithm.startsWith('ES')) signature = sign(hash, data, { key, dsaEncoding: 'ieee-p1363' });
  else if (algorithm.startsWith('PS'))
    signature = sign(hash, data, {
      key,
      padding: constants.RSA_PKCS1_PSS_PADDING,
      saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
    });
  else signature = sign(hash, data, key);
  return `${input}.${signature.toString('base64url')}`;
}

/** RFC 7523 §3 client assertion: the client is issuer and subject, the AS the audience. */
export function clientAssertion(
  clientId: string,
  audience: string,
  key: KeyObject,
  algorithm: SigningAlgorithm,
  keyId?: string,
  lifetimeSeconds = 300,
): string {
  const now = Math.floor(Date.now() / 1000);
  return signJwt(
    { iss: clientId, sub: clientId, aud: audience, iat: now, exp: now + lifetimeSeconds, jti: randomUUID() },
    key,
    algorithm,
    keyId,
  );
}

function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}
