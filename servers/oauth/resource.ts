// The protected MCP resource: a Bearer token with the needed scopes gets a minimal MCP server;
// anything else gets 401 or 403 with the challenge the options describe.
import type { ServerResponse } from 'node:http';
import { json, type OAuthContext, type RecordedOAuthRequest } from './context.js';
import type { Metadata } from './metadata.js';
import type { TokenEndpoint } from './tokens.js';

/** Just enough MCP for a real client: initialize, notifications, tools/list and an echoing tools/call, `{}` otherwise. */
export function answerMcp(res: ServerResponse, message: any): void {
  if (message && typeof message === 'object' && !('id' in message)) {
    res.writeHead(202).end();
    return;
  }
  const method = message?.method;
  const result =
    method === 'initialize'
      ? {
          protocolVersion: '2025-11-25',
          capabilities: { tools: {} },
          serverInfo: { name: 'oauth-fixture', version: '1.0.0' },
        }
      : method === 'tools/call'
        ? { content: [{ type: 'text', text: String(message.params?.arguments?.text ?? '') }] }
        : method === 'tools/list'
          ? { tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }] }
          : {};
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', id: message?.id ?? null, result }));
}

/** POST /mcp. */
export function createProtectedResource(ctx: OAuthContext, metadata: Metadata, tokens: TokenEndpoint) {
  const { o } = ctx;
  const challenge = (scope: string | undefined, error?: string) =>
    [
      'Bearer',
      [
        error ? `error="${error}"` : undefined,
        scope ? `scope="${scope}"` : undefined,
        metadata.prmPath && o.prmInHeader ? `resource_metadata="${ctx.origin}${metadata.prmPath}"` : undefined,
      ]
        .filter(Boolean)
        .join(', '),
    ].join(' ');

  return (record: RecordedOAuthRequest, authorization: string | undefined, res: ServerResponse): void => {
    const scopes = authorization?.startsWith('Bearer ') ? tokens.scopesOf(authorization.slice(7)) : undefined;
    if (!scopes)
      return json(
        res,
        401,
        { error: 'invalid_token' },
        { 'www-authenticate': challenge(o.challengeScope, authorization ? 'invalid_token' : undefined) },
      );
    const needed = [...(o.requiredScopes ?? []), ...(record.json?.method === 'tools/call' ? (o.callScopes ?? []) : [])];
    if (o.alwaysInsufficient || !needed.every((s) => scopes.includes(s))) {
      return json(
        res,
        403,
        { error: 'insufficient_scope' },
        { 'www-authenticate': challenge(needed.join(' ') || o.challengeScope, 'insufficient_scope') },
      );
    }
    answerMcp(res, record.json);
  };
}
