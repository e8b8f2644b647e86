/**
 * PKCE (RFC 7636) with S256 only: MCP requires it, and a server that does not advertise S256 is
 * refused rather than downgraded to `plain`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AuthorizationError } from '../core/errors.js';
import type { AuthorizationServerMetadata } from './metadata.js';

export interface Pkce {
  verifier: string;
  challenge: string;
  method: 'S256';
}

/** 32 random bytes give a 43-character verifier, the minimum length RFC 7636 allows. */
export function createPkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: s256(verifier), method: 'S256' };
}

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}

/**
 * Throws a fatal error unless the metadata advertises S256. Without any metadata (a 2025-03-26
 * server using the default endpoints) there is nothing to check, and S256 is sent regardless.
 */
export function assertS256Supported(metadata: AuthorizationServerMetadata | undefined, server: string): void {
  if (!metadata) return;
  const methods = metadata.code_challenge_methods_supported;
  if (!methods) {
    throw new AuthorizationError(
      `authorization server ${metadata.issuer} does not advertise code_challenge_methods_supported, so PKCE cannot be guaranteed; refusing to proceed`,
      { server },
    );
  }
  if (!methods.includes('S256')) {
    throw new AuthorizationError(
      `authorization server ${metadata.issuer} does not support the S256 PKCE method (it lists ${methods.join(', ') || 'none'}); refusing to proceed`,
      { server },
    );
  }
}

/** An unguessable `state` value for one authorization request. */
export function createState(): string {
  return randomBytes(24).toString('base64url');
}
