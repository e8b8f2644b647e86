/**
 * The documents discovery reads, validated with zod: Protected Resource Metadata (RFC 9728) and
 * Authorization Server Metadata (RFC 8414 / OpenID Connect Discovery). Unknown fields pass.
 */
import { z } from 'zod';
import { AuthorizationError } from '../core/errors.js';

const httpUrl = z
  .string()
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), 'must be an http(s) URL');
const strings = z.array(z.string());

export const protectedResourceMetadataSchema = z.looseObject({
  resource: z.string().min(1),
  authorization_servers: z.array(httpUrl).min(1, 'must list at least one authorization server'),
  scopes_supported: strings.optional(),
  /** RFC 9728 §2: the resource server only takes DPoP-bound tokens. Ignored when malformed. */
  dpop_bound_access_tokens_required: z.boolean().optional().catch(undefined),
});
export type ProtectedResourceMetadata = z.infer<typeof protectedResourceMetadataSchema>;

export const authorizationServerMetadataSchema = z.looseObject({
  issuer: z.string().min(1),
  authorization_endpoint: httpUrl.optional(),
  token_endpoint: httpUrl,
  registration_endpoint: httpUrl.optional(),
  revocation_endpoint: httpUrl.optional(),
  scopes_supported: strings.optional(),
  response_types_supported: strings.optional(),
  grant_types_supported: strings.optional(),
  code_challenge_methods_supported: strings.optional(),
  token_endpoint_auth_methods_supported: strings.optional(),
  token_endpoint_auth_signing_alg_values_supported: strings.optional(),
  client_id_metadata_document_supported: z.boolean().optional(),
  authorization_response_iss_parameter_supported: z.boolean().optional(),
  /** RFC 9449 §5.1: the JWS algorithms the server takes in DPoP proofs. Ignored when malformed. */
  dpop_signing_alg_values_supported: strings.optional().catch(undefined),
});
export type AuthorizationServerMetadata = z.infer<typeof authorizationServerMetadataSchema>;

/** Validates `value` or throws a fatal AuthorizationError listing each bad field. */
export function validateDocument<T>(schema: z.ZodType<T>, value: unknown, what: string, server: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = result.error.issues
    .map((issue) => `${issue.path.join('.') || '(document)'}: ${issue.message}`)
    .join('; ');
  throw new AuthorizationError(`${what} is invalid: ${issues}`, { server });
}
