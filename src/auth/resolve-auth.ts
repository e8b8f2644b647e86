/**
 * A server's `auth` setting, turned into the one AuthProvider its transports share for the
 * life of the server (tokens survive reconnects and restarts).
 */
import type { AuthProvider } from './types.js';

/** Anything with `authorization()` and `authorize()` is used as is; plain objects are OAuth client options. */
export type AuthConfig = AuthProvider | Record<string, unknown>;

export function isAuthProvider(value: unknown): value is AuthProvider {
  const candidate = value as Partial<AuthProvider> | null;
  return typeof candidate?.authorization === 'function' && typeof candidate.authorize === 'function';
}

export function resolveAuth(config: AuthConfig | undefined, context: { resourceUrl: URL; server: string }): AuthProvider | undefined {
  if (config === undefined) return undefined;
  if (isAuthProvider(config)) return config;
  void context;
  throw new Error('OAuth client options are not wired yet');
}
