/**
 * A server's `auth` setting, turned into the one AuthProvider its transports share for the
 * life of the server (tokens survive reconnects and restarts).
 */
import { createOAuthProvider } from './oauth-provider.js';
import type { OAuthClientOptions } from './options.js';
import type { Store } from '../store/types.js';
import type { AuthProvider } from './types.js';

/** An AuthProvider of your own, or options for the built-in OAuth 2.1 client. */
export type AuthConfig = AuthProvider | OAuthClientOptions;

/** Anything with `authorization()` and `authorize()` is used as is. */
export function isAuthProvider(value: unknown): value is AuthProvider {
  const candidate = value as Partial<AuthProvider> | null;
  return typeof candidate?.authorization === 'function' && typeof candidate.authorize === 'function';
}

/** Throws a ConfigError naming `servers.<name>.auth.<field>` for invalid OAuth options. */
export function resolveAuth(
  config: AuthConfig | undefined,
  context: {
    resourceUrl: URL;
    server: string;
    store?: Store | undefined;
    onWarning?: ((error: Error) => void) | undefined;
  },
): AuthProvider | undefined {
  if (config === undefined) return undefined;
  if (isAuthProvider(config)) return config;
  return createOAuthProvider(config, { ...context, configPath: `servers.${context.server}.auth` });
}
