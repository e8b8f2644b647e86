/**
 * OAuth options for the conformance suite's `auth/*` scenarios. The suite's authorization server
 * auto-approves: GET /authorize answers 302 to the redirect URI with a code, so the headless
 * "browser" fetches the URL without following redirects and hands back the Location.
 * Credentials for the pre-registration and extension scenarios come in MCP_CONFORMANCE_CONTEXT.
 */
import type { OAuthClientOptions } from '../../src/auth/index.js';
import { approveAtOnce } from '../../servers/oauth-server.js';

interface Context {
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
  idp_client_id?: string;
  idp_id_token?: string;
  idp_token_endpoint?: string;
  valid_jwt?: string;
}

/** The client's metadata document URL (CIMD); the suite's authorization servers do not fetch it. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

export function authOptionsFor(scenario: string, contextJson: string | undefined): OAuthClientOptions {
  const context = JSON.parse(contextJson ?? '{}') as Context;
  const browser = { redirectUri: 'http://127.0.0.1:3000/callback', onRedirect: approveAtOnce };
  switch (scenario) {
    case 'auth/pre-registration':
      return { ...browser, clientId: context.client_id, clientSecret: context.client_secret };
    case 'auth/client-credentials-basic':
      return { grant: 'client_credentials', clientId: context.client_id, clientSecret: context.client_secret };
    case 'auth/client-credentials-jwt':
      return {
        grant: 'client_credentials',
        clientId: context.client_id,
        privateKeyPem: context.private_key_pem,
        signingAlgorithm: context.signing_algorithm as OAuthClientOptions['signingAlgorithm'],
      };
    case 'auth/wif-jwt-bearer':
      return { grant: 'workload_identity', clientId: context.client_id, workloadAssertion: context.valid_jwt };
    case 'auth/enterprise-managed-authorization':
    case 'auth/cross-app-access-complete-flow':
      return {
        grant: 'cross_app_access',
        clientId: context.client_id,
        clientSecret: context.client_secret,
        idpClientId: context.idp_client_id,
        idpIdToken: context.idp_id_token,
        idpTokenEndpoint: context.idp_token_endpoint,
      };
    default:
      return { ...browser, clientMetadataUrl: CLIENT_METADATA_URL };
  }
}
