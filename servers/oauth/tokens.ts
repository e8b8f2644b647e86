// The token endpoint by grant (authorization code with PKCE, refresh with rotation, client
// credentials, jwt-bearer from a workload or an ID-JAG), the IdP's token exchange that mints
// ID-JAGs, revocation (RFC 7009), and the issued tokens the resource checks.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, verify } from 'node:crypto';
import type { AuthorizationEndpoint } from './authorize.js';
import type { Clients } from './clients.js';
import { issuerOf, json, oauthError, type OAuthContext } from './context.js';
import type { Metadata } from './metadata.js';

export interface TokenEndpoint {
  /** POST <issuer>/token. */
  token(req: IncomingMessage, form: Record<string, string>, res: ServerResponse): void;
  /** POST <issuer>/revoke. */
  revoke(req: IncomingMessage, form: Record<string, string>, res: ServerResponse): void;
  /** POST /idp/token: an enterprise IdP's token exchange (subject token → ID-JAG). */
  exchange(form: Record<string, string>, res: ServerResponse): void;
  /** The scopes of a live access token, or undefined. */
  scopesOf(accessToken: string): string[] | undefined;
  /** Forget every access token (they expired). */
  expireAccessTokens(): void;
  /** Forget every access and refresh token (the authorization server moved). */
  forgetAll(): void;
  /** What happened so far: refreshes answered, refresh tokens reused, sign-ins, grants revoked. */
  readonly counts: TokenCounts;
  /** The next `count` refreshes fail with this status (a transient failure: 503 by default). */
  failRefreshes(count: number, status?: number): void;
  /** From now on, hold each refresh this long (see `refreshDelayMs`); 0 answers at once. */
  delayRefreshes(ms: number): void;
}

export interface TokenCounts {
  /** refresh_token grants answered with new tokens. */
  refreshes: number;
  /** Refresh tokens presented again after they were spent. */
  reuses: number;
  /** Grants that started a new sign-in (authorization_code, client_credentials). */
  signIns: number;
  /** Grants revoked because a refresh token was reused. */
  revokedGrants: number;
  /** Refreshes held by `delayRefreshes` (received, not processed yet). */
  held: number;
}

const scopeList = (scope: string | undefined): string[] => (scope ? scope.split(' ') : []);

export function createTokenEndpoint(
  ctx: OAuthContext,
  deps: { clients: Clients; codes: AuthorizationEndpoint; metadata: Metadata; nextId: () => number },
): TokenEndpoint {
  const { o } = ctx;
  const { clients, codes, metadata, nextId } = deps;
  const accessTokens = new Map<string, { scope: string[]; grant: number; expiresAt: number }>();
  const refreshTokens = new Map<string, { clientId: string; scope: string[]; grant: number }>();
  /** Spent refresh tokens → the grant they belong to (reuse detection). */
  const spent = new Map<string, number>();
  const revoked = new Set<number>();
  const counts: TokenCounts = { refreshes: 0, reuses: 0, signIns: 0, revokedGrants: 0, held: 0 };
  let failing = { count: 0, status: 503 };
  let delayMs = o.refreshDelayMs ?? 0;
  /** Minted ID-JAGs → the resource they are for. */
  const jags = new Map<string, string>();

  /** A grant is what one sign-in started; its refreshes belong to it. */
  const issue = (scope: string[], clientId: string, grant?: number) => {
    const n = nextId();
    if (grant === undefined) counts.signIns++;
    const family = grant ?? n;
    const access = `at-${n}`;
    const lifetimeMs = o.accessTokenMs ?? (o.expiresIn ?? 3600) * 1000;
    accessTokens.set(access, { scope, grant: family, expiresAt: o.accessTokenMs ? Date.now() + lifetimeMs : Infinity });
    const body: Record<string, unknown> = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: lifetimeMs / 1000,
      ...(scope.length ? { scope: scope.join(' ') } : {}),
    };
    if (o.refreshTokens) {
      const refresh = `rt-${n}`;
      refreshTokens.set(refresh, { clientId, scope, grant: family });
      body['refresh_token'] = refresh;
    }
    return body;
  };
  const revokeGrant = (grant: number) => {
    if (revoked.has(grant)) return;
    revoked.add(grant);
    counts.revokedGrants++;
    for (const [token, entry] of refreshTokens) if (entry.grant === grant) refreshTokens.delete(token);
    for (const [token, entry] of accessTokens) if (entry.grant === grant) accessTokens.delete(token);
  };
  const refresh = (who: { clientId: string }, form: Record<string, string>, res: ServerResponse) => {
    if (failing.count > 0) {
      failing.count--;
      return oauthError(res, failing.status, 'temporarily_unavailable', 'try again later');
    }
    const presented = form['refresh_token'] ?? '';
    const entry = refreshTokens.get(presented);
    if (!entry && spent.has(presented)) {
      counts.reuses++;
      if (o.revokeOnReuse) revokeGrant(spent.get(presented)!);
    }
    if (!entry || entry.clientId !== who.clientId)
      return oauthError(res, 400, 'invalid_grant', 'refresh token unknown or used');
    counts.refreshes++;
    if (o.omitRefreshToken) {
      const body = issue(entry.scope, who.clientId, entry.grant);
      refreshTokens.delete(String(body['refresh_token']));
      delete body['refresh_token'];
      return json(res, 200, body);
    }
    refreshTokens.delete(presented); // rotation: each refresh token works once
    spent.set(presented, entry.grant);
    return json(res, 200, issue(entry.scope, who.clientId, entry.grant));
  };

  return {
    token(req, form, res) {
      if (o.tokenError)
        return oauthError(res, 400, o.tokenError, `refused ${JSON.stringify(form)} ${req.headers.authorization ?? ''}`);
      // RFC 7523 §3.1: a jwt-bearer grant may come without client authentication.
      const anonymousWorkload =
        o.workloadKey && form['grant_type'] === 'urn:ietf:params:oauth:grant-type:jwt-bearer' && !form['client_id'];
      const who = anonymousWorkload ? { clientId: 'workload' } : clients.authenticate(req, form);
      if ('error' in who) return oauthError(res, 401, 'invalid_client', who.error);
      const grant = form['grant_type'];
      if (!form['resource']) return oauthError(res, 400, 'invalid_target', 'resource is required');
      // RFC 8707 with RFC 9728: the identifier exactly as the metadata publishes it.
      const published = metadata.publishedResource();
      if (metadata.prmPath && form['resource'] !== published)
        return oauthError(res, 400, 'invalid_target', `resource ${form['resource']} is not ${published}`);
      if (grant === 'authorization_code') {
        const entry = codes.redeem(form['code'] ?? '');
        if (!entry || entry.clientId !== who.clientId || entry.redirectUri !== form['redirect_uri'])
          return oauthError(res, 400, 'invalid_grant', 'bad code');
        if (
          entry.challenge &&
          createHash('sha256')
            .update(form['code_verifier'] ?? '')
            .digest('base64url') !== entry.challenge
        )
          return oauthError(res, 400, 'invalid_grant', 'PKCE mismatch');
        return json(res, 200, issue(scopeList(entry.scope), who.clientId));
      }
      if (grant === 'refresh_token') {
        if (!delayMs) return refresh(who, form, res);
        // Held; a client that went away meanwhile never had its refresh processed.
        counts.held++;
        setTimeout(() => {
          if (!req.socket.destroyed) refresh(who, form, res);
        }, delayMs);
        return;
      }
      if (grant === 'client_credentials') return json(res, 200, issue(scopeList(form['scope']), who.clientId));
      if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer' && o.workloadKey) {
        const [h, b, sig] = String(form['assertion']).split('.');
        const claims = JSON.parse(Buffer.from(b ?? '', 'base64url').toString() || '{}');
        const signed = verify(
          'sha256',
          Buffer.from(`${h}.${b}`),
          { key: o.workloadKey, dsaEncoding: 'ieee-p1363' },
          Buffer.from(sig ?? '', 'base64url'),
        );
        if (!signed || claims.aud !== issuerOf(ctx) || !(claims.exp > Date.now() / 1000))
          return oauthError(res, 400, 'invalid_grant', 'workload assertion refused');
        return json(res, 200, issue(scopeList(form['scope']), claims.sub));
      }
      if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
        if (jags.get(form['assertion'] ?? '') !== `${ctx.origin}/mcp`)
          return oauthError(res, 400, 'invalid_grant', 'unknown ID-JAG');
        return json(res, 200, issue(scopeList(form['scope']), who.clientId));
      }
      return oauthError(res, 400, 'unsupported_grant_type', String(grant));
    },
    revoke(req, form, res) {
      const who = clients.authenticate(req, form);
      if ('error' in who) return oauthError(res, 401, 'invalid_client', who.error);
      accessTokens.delete(form['token'] ?? '');
      refreshTokens.delete(form['token'] ?? '');
      res.writeHead(200).end();
    },
    exchange(form, res) {
      if (
        form['grant_type'] !== 'urn:ietf:params:oauth:grant-type:token-exchange' ||
        !form['subject_token'] ||
        !form['audience'] ||
        !form['resource']
      ) {
        return oauthError(res, 400, 'invalid_request', 'bad token exchange');
      }
      const jag = `jag-${nextId()}`;
      jags.set(jag, form['resource']);
      json(res, 200, {
        access_token: jag,
        issued_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
        token_type: 'N_A',
      });
    },
    scopesOf(accessToken) {
      const entry = accessTokens.get(accessToken);
      return entry && entry.expiresAt > Date.now() ? entry.scope : undefined;
    },
    counts,
    failRefreshes(count, status = 503) {
      failing = { count, status };
    },
    delayRefreshes(ms) {
      delayMs = ms;
    },
    expireAccessTokens: () => accessTokens.clear(),
    forgetAll() {
      accessTokens.clear();
      refreshTokens.clear();
    },
  };
}
