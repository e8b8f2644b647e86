// The client registry: clients known up front, dynamic registration (RFC 7591), client ID
// metadata documents, and client authentication at the token endpoint (RFC 6749 §2.3, RFC 7523).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { verify, type KeyObject } from 'node:crypto';
import { issuerOf, json, type OAuthContext, type RecordedOAuthRequest } from './context.js';

interface Client {
  secret?: string | undefined;
  publicKey?: KeyObject | undefined;
  method?: string;
  /** The authorization server that registered it (undefined: known everywhere). */
  issuerPath?: string;
}

export interface Clients {
  /** A client the authorization endpoint accepts: registered here, or a CIMD URL when offered. */
  forAuthorize(id: string): Client | undefined;
  /** Which client authenticated, or why not. */
  authenticate(req: IncomingMessage, form: Record<string, string>): { clientId: string } | { error: string };
  /** POST /register. */
  register(record: RecordedOAuthRequest, res: ServerResponse): void;
}

export function createClients(ctx: OAuthContext, nextId: () => number): Clients {
  const { o } = ctx;
  const clients = new Map<string, Client>();
  for (const c of o.clients ?? []) clients.set(c.id, { secret: c.secret, publicKey: c.publicKey });
  /** A registration is only good at the authorization server that made it (SEP-2352). */
  const knownClient = (id: string) => {
    const entry = clients.get(id);
    return entry && (entry.issuerPath === undefined || entry.issuerPath === ctx.issuerPath) ? entry : undefined;
  };
  const forAuthorize = (id: string): Client | undefined =>
    knownClient(id) ?? (o.cimd && id.startsWith('https://') ? {} : undefined);

  return {
    forAuthorize,
    authenticate(req, form) {
      const header = req.headers.authorization;
      if (header?.startsWith('Basic ')) {
        const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
        const colon = decoded.indexOf(':');
        if (colon < 0) return { error: 'Basic credentials without a colon' };
        const id = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
        const secret = decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' '));
        if (!o.authMethods.includes('client_secret_basic')) return { error: 'client_secret_basic not supported' };
        return knownClient(id)?.secret === secret ? { clientId: id } : { error: 'bad Basic credentials' };
      }
      if (form['client_assertion']) {
        if (form['client_assertion_type'] !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
          return { error: 'bad client_assertion_type' };
        const [h, b, s] = form['client_assertion'].split('.');
        const header = JSON.parse(Buffer.from(h!, 'base64url').toString());
        const claims = JSON.parse(Buffer.from(b!, 'base64url').toString());
        const client = knownClient(claims.sub);
        if (!client?.publicKey || claims.iss !== claims.sub) return { error: 'unknown assertion client' };
        const es = String(header.alg).startsWith('ES');
        const ok = verify(
          `sha${String(header.alg).slice(2)}`,
          Buffer.from(`${h}.${b}`),
          { key: client.publicKey, ...(es ? { dsaEncoding: 'ieee-p1363' as const } : {}) },
          Buffer.from(s!, 'base64url'),
        );
        if (!ok) return { error: 'bad assertion signature' };
        if (claims.aud !== issuerOf(ctx)) return { error: `assertion aud ${claims.aud}` };
        return { clientId: claims.sub };
      }
      const id = form['client_id'];
      if (!id) return { error: 'no client authentication' };
      if (form['client_secret'] !== undefined) {
        if (!o.authMethods.includes('client_secret_post')) return { error: 'client_secret_post not supported' };
        return knownClient(id)?.secret === form['client_secret'] ? { clientId: id } : { error: 'bad client_secret' };
      }
      const known = forAuthorize(id);
      if (!known) return { error: 'unknown client' };
      if (known.secret) return { error: 'confidential client sent no secret' };
      return { clientId: id };
    },
    register(record, res) {
      const body = record.json ?? {};
      const n = nextId();
      const id = `client-${n}`;
      const method = body.token_endpoint_auth_method ?? 'client_secret_basic';
      const secret = method === 'none' ? undefined : `secret-${n}`;
      clients.set(id, { secret, method, issuerPath: ctx.issuerPath });
      json(res, 201, {
        client_id: id,
        ...(secret ? { client_secret: secret } : {}),
        token_endpoint_auth_method: method,
        redirect_uris: body.redirect_uris,
      });
    },
  };
}
