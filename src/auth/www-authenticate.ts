/**
 * `WWW-Authenticate` parsing (RFC 9110 §11.6.1): several challenges in one header, parameters as
 * tokens or quoted strings with backslash escapes, token68 credentials. Servers send junk often
 * enough that the parser never throws: what it cannot read it skips.
 */

export interface Challenge {
  /** The auth scheme as sent (compare case-insensitively). */
  scheme: string;
  /** Parameter names lower-cased; the first occurrence wins. */
  params: Record<string, string>;
  token68?: string | undefined;
}

/** What a `Bearer` challenge says to an OAuth client (RFC 6750 §3, RFC 9728 §5.1). */
export interface BearerChallenge {
  resourceMetadata?: string | undefined;
  scope?: string | undefined;
  error?: string | undefined;
  errorDescription?: string | undefined;
  /** The header also (or only) offers the `DPoP` scheme: the resource server takes DPoP-bound tokens. */
  dpopOffered?: boolean | undefined;
}

const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*/;

export function parseWwwAuthenticate(header: string | undefined): Challenge[] {
  if (!header) return [];
  const text = header;
  const challenges: Challenge[] = [];
  let pos = 0;

  const skip = (chars: RegExp): void => {
    while (pos < text.length && chars.test(text[pos]!)) pos++;
  };
  const readToken = (): string => {
    const start = pos;
    while (pos < text.length && TCHAR.test(text[pos]!)) pos++;
    return text.slice(start, pos);
  };
  const readQuoted = (): string => {
    pos++; // opening quote
    let value = '';
    while (pos < text.length && text[pos] !== '"') {
      if (text[pos] === '\\' && pos + 1 < text.length) pos++;
      value += text[pos];
      pos++;
    }
    pos++; // closing quote (or past the end when unterminated)
    return value;
  };

  while (pos < text.length) {
    skip(/[\s,]/);
    const scheme = readToken();
    if (!scheme) {
      pos++; // junk: skip one character and look for the next scheme
      continue;
    }
    const challenge: Challenge = { scheme, params: {} };
    challenges.push(challenge);
    skip(/[ \t]/);
    // `Basic dXNlcjpwYXNz`: a token68 is a lone item; `name=value` starts the parameters
    const t68 = TOKEN68.exec(text.slice(pos));
    if (t68 && isEndOfItem(text, pos + t68[0].length)) {
      challenge.token68 = t68[0];
      pos += t68[0].length;
      continue;
    }
    // auth-params until something that is not `name = value` (the next challenge's scheme)
    for (;;) {
      const save = pos;
      skip(/[\s,]/);
      const name = readToken();
      skip(/[ \t]/);
      if (!name || text[pos] !== '=') {
        pos = save;
        break;
      }
      pos++;
      skip(/[ \t]/);
      const value = text[pos] === '"' ? readQuoted() : readToken();
      const key = name.toLowerCase();
      if (!(key in challenge.params)) challenge.params[key] = value;
    }
    if (pos < text.length && !/[\s,]/.test(text[pos]!) && !TCHAR.test(text[pos]!)) pos++;
  }
  return challenges;
}

function isEndOfItem(text: string, at: number): boolean {
  const rest = text.slice(at);
  return /^\s*(,|$)/.test(rest);
}

/**
 * What an OAuth challenge says: the first `Bearer` challenge's parameters, or the `DPoP` one's
 * (RFC 9449 §7.1) when there is no Bearer challenge or `preferDpop` (the token in use is
 * DPoP-bound, so its error is in that challenge). Empty when there is neither.
 */
export function parseBearerChallenge(header: string | undefined, preferDpop = false): BearerChallenge {
  const challenges = parseWwwAuthenticate(header);
  const bearer = challenges.find((c) => c.scheme.toLowerCase() === 'bearer');
  const dpop = challenges.find((c) => c.scheme.toLowerCase() === 'dpop');
  const chosen = preferDpop ? (dpop ?? bearer) : (bearer ?? dpop);
  if (!chosen) return {};
  const p = chosen.params;
  const fallback = chosen === bearer ? dpop?.params : bearer?.params;
  return {
    resourceMetadata: nonEmpty(p['resource_metadata']) ?? nonEmpty(fallback?.['resource_metadata']),
    scope: nonEmpty(p['scope']?.trim()),
    error: nonEmpty(p['error']),
    errorDescription: nonEmpty(p['error_description']),
    ...(dpop ? { dpopOffered: true } : {}),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
