/**
 * What a refusal for want of credentials told the client: the transports report it, the typed
 * error carries it (AuthorizationRequiredError), the AuthProvider answers it (auth/types.ts).
 */

/** What a 401, or a 403 with `insufficient_scope`, told the client. */
export interface AuthChallenge {
  status: 401 | 403;
  /** The `WWW-Authenticate` header exactly as the server sent it (parsed by the provider). */
  wwwAuthenticate: string | undefined;
  /** The MCP endpoint that refused the request: the protected resource. */
  resourceUrl: URL;
}
