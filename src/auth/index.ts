/** The built-in OAuth 2.1 client for MCP servers, and its building blocks. */
export { createOAuthProvider, type OAuthProvider, type OAuthProviderContext } from './oauth-provider.js';
export { parseOAuthOptions, type OAuthClientOptions, type OAuthGrant, type RedirectHandler } from './options.js';
export {
  parseWwwAuthenticate,
  parseBearerChallenge,
  type Challenge,
  type BearerChallenge,
} from './www-authenticate.js';
export {
  discover,
  protectedResourceMetadataUrls,
  authorizationServerMetadataUrls,
  type Discovery,
} from './discovery.js';
export { canonicalResource, resourceCovers } from './resource.js';
export type { ProtectedResourceMetadata, AuthorizationServerMetadata } from './metadata.js';
export { createPkce, s256, assertS256Supported, type Pkce } from './pkce.js';
export { signJwt, clientAssertion, SIGNING_ALGORITHMS, type SigningAlgorithm } from './jwt.js';
export { chooseAuthMethod, applyClientAuth, type ClientCredentials } from './client-auth.js';
export { resolveClient, type ResolvedClient } from './registration.js';
export { postTokenRequest, parseTokenResponse, requestTokens } from './token-endpoint.js';
export { selectScope, unionScopes, scopesCover } from './scopes.js';
export { memoryTokenStore } from './token-store.js';
export type * from './types.js';
