/**
 * Evidence, not guesses, at the first connect: a URL whose first handshake is answered 404 with
 * no session, on every transport tried, is a wrong URL (a typo, `/mcp` vs `/sse`, a proxy route
 * missing), not a server that is down. Ten minutes of fast retries would help nobody: the error
 * is fatal, so the server goes to `failed` for good and nothing more is sent to that URL until
 * `reconnect()` or a changed config. A server that answered once and then 404s is not judged so:
 * that is a deploy under way, and the restart policy applies.
 */
import { TransportError, type ErrorDetails } from '../../core/errors.js';
import { excerpt, htmlText, looksLikeHtml } from '../../core/excerpt.js';
import type { ReadOnlyContext } from '../context/server-context.js';

/** The fatal error for `refusals` (one per transport tried), or undefined when they are not all a first-handshake 404. */
export function wrongPath(context: ReadOnlyContext, refusals: readonly unknown[]): EndpointNotFoundError | undefined {
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

/**
 * Nothing answers MCP at the configured URL: its first handshake was answered 404 with no
 * session, on every transport tried (Streamable HTTP, then legacy SSE under `type: 'auto'`). A
 * configuration error, not an outage: fatal (the server goes to `failed` for good; `reconnect()`
 * or a changed config tries again). Names the URL (its origin and path only), the paths to check,
 * and a short text excerpt of what the server answered (an HTML page's text, not its markup).
 */
export class EndpointNotFoundError extends TransportError {
  override readonly code = 'ENDPOINT_NOT_FOUND' as const;
  override readonly retryable = false;
  override readonly fatal = true;
  constructor(
    /** The URL without query or credentials. */
    readonly url: string,
    /** What each transport answered, in the order tried. */
    readonly refusals: readonly unknown[],
    details?: ErrorDetails & { body?: string | undefined },
  ) {
    const said = details?.body ? `; it answered: ${details.body}` : '';
    super(
      `nothing answers MCP at ${url}: HTTP 404 to the first handshake (${refusals.length > 1 ? 'Streamable HTTP and legacy SSE' : 'no session'}). Check the path: Streamable HTTP servers usually serve '/mcp', legacy HTTP+SSE ones '/sse'${said}`,
      404,
      details,
    );
  }
}
