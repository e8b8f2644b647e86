/**
 * Evidence, not guesses, at the first connect: a URL whose first handshake is answered 404 with
 * no session, on every transport tried, is a wrong URL (a typo, `/mcp` vs `/sse`, a proxy route
 * missing), not a server that is down. Ten minutes of fast retries would help nobody: the error
 * is fatal, so the server goes to `failed` for good and nothing more is sent to that URL until
 * `reconnect()` or a changed config. A server that answered once and then 404s is not judged so:
 * that is a deploy under way, and the restart policy applies.
 */
import { EndpointNotFoundError, TransportError } from '../../core/errors.js';
import { excerpt, htmlText, looksLikeHtml } from '../../core/excerpt.js';
import type { ServerContext } from '../context/server-context.js';

/** The fatal error for `refusals` (one per transport tried), or undefined when they are not all a first-handshake 404. */
export function wrongPath(context: ServerContext, refusals: readonly unknown[]): EndpointNotFoundError | undefined {
  const config = context.config;
  if (config.kind !== 'url' || context.connectedBefore) return undefined;
  const all404 = refusals.every(
    (error) => error instanceof TransportError && error.status === 404 && error.sessionGeneration === undefined,
  );
  if (!all404 || refusals.length === 0) return undefined;
  const url = context.redact(`${config.url.origin}${config.url.pathname}`);
  const said = refusals.map((error) => (error as TransportError).body).find((text) => text !== undefined);
  // An HTML error page says it in its text, not its markup.
  const body = said === undefined ? undefined : excerpt(looksLikeHtml(said) ? htmlText(said) : said, 160);
  return new EndpointNotFoundError(url, refusals, { server: context.name, body, cause: refusals.at(-1) });
}
