/**
 * The one rule for what is a secret, used by errors, inspection, logs and status alike:
 *
 * - a value under a secret-looking name (a header, an environment variable, a URL query
 *   parameter, an object key: authorization, cookie, token, key, secret, password, session id,
 *   credential) is hidden wherever it appears, also inside longer text, with and without its
 *   scheme (`Bearer x` and `x`);
 * - every other configured header or environment value is hidden where a whole string equals it
 *   (searching for short, common values inside text would mangle it);
 * - values expanded from the environment, inputs or env files (`${VAR}`) are hidden like the
 *   first kind, whatever their name;
 * - the live secrets only the transports know (the session id, the current access token) are
 *   hidden like the first kind.
 */
export const REDACTED = '[redacted]';

const SECRET_NAME = /auth|cookie|token|key|secret|passw|session-?id|credential|signature/i;
/** Shorter values are not searched for inside longer strings (too many false hits). */
const MIN_SECRET_LENGTH = 4;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

export interface Secrets {
  /** Strings equal to one of these are redacted whole. */
  readonly values: ReadonlySet<string>;
  /** Strings containing one of these have it redacted (longest first). */
  readonly fragments: readonly string[];
}

export const NO_SECRETS: Secrets = { values: new Set(), fragments: [] };

/** What a server's configuration makes secret: its headers, its environment, its URL's query. */
export interface SecretSources {
  headers?: Record<string, string> | undefined;
  env?: Record<string, string> | undefined;
  url?: URL | string | undefined;
  /** Values secret wherever they appear, whatever they were named: those expanded from `${VAR}`, inputs, env files. */
  values?: readonly string[] | undefined;
}

export function secretsOf(sources: Iterable<SecretSources>): Secrets {
  const values = new Set<string>();
  const fragments = new Set<string>();
  const add = (name: string, value: string) => {
    const bare = value.replace(/^\S+\s+/, '');
    for (const candidate of [value, bare]) {
      if (candidate.length > 0) values.add(candidate);
      if (isSecretName(name) && candidate.trim().length >= MIN_SECRET_LENGTH) fragments.add(candidate);
    }
  };
  for (const source of sources) {
    for (const map of [source.headers, source.env]) {
      if (map) for (const [name, value] of Object.entries(map)) add(name, value);
    }
    const url = typeof source.url === 'string' && URL.canParse(source.url) ? new URL(source.url) : source.url;
    if (url instanceof URL) for (const [name, value] of url.searchParams) if (isSecretName(name)) add(name, value);
    for (const value of source.values ?? []) add('interpolated-secret', value);
  }
  // Longest first, so `Bearer x` is replaced whole before `x`.
  return { values, fragments: [...fragments].sort((a, b) => b.length - a.length) };
}

/** `text` with every secret replaced; `live` adds the secrets only the caller knows (session id, token). */
export function redact(text: string, secrets: Secrets, live: readonly (string | undefined)[] = []): string {
  if (secrets.values.has(text)) return REDACTED;
  let result = text;
  for (const secret of live) {
    if (secret === undefined) continue;
    // `Bearer x` whole first, then a bare `x`.
    for (const candidate of [secret, secret.replace(/^\S+\s+/, '')]) {
      if (candidate.length >= MIN_SECRET_LENGTH) result = result.split(candidate).join(REDACTED);
    }
  }
  for (const secret of secrets.fragments) {
    if (result.includes(secret)) result = result.split(secret).join(REDACTED);
  }
  return result;
}
