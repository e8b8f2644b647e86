// What the OAuth fixture's parts share: the options, where the servers live, JSON answers.
import type { ServerResponse } from 'node:http';
import type { ResolvedOptions } from './options.js';

export interface RecordedOAuthRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  form?: Record<string, string>;
  json?: any;
}

export interface OAuthContext {
  readonly o: ResolvedOptions;
  /** `http://127.0.0.1:<port>`, known once listening. */
  origin: string;
  /** The authorization server's path on the origin ('' or e.g. '/tenant1'); SEP-2352 moves it. */
  issuerPath: string;
}

export const issuerOf = (ctx: OAuthContext): string => `${ctx.origin}${ctx.issuerPath}`;

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function oauthError(res: ServerResponse, status: number, error: string, description: string): void {
  json(res, status, { error, error_description: description });
}
