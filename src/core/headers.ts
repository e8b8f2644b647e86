/** HTTP header values as undici hands them over (a string, several, or none). */

export type HeaderValue = string | string[] | undefined;

/** The first value of a header. */
export function headerValue(header: HeaderValue): string | undefined {
  return Array.isArray(header) ? header[0] : header;
}

/** `text/event-stream; charset=utf-8` -> `text/event-stream`. */
export function mediaTypeEssence(header: HeaderValue): string {
  const value = headerValue(header);
  if (!value) return '';
  const semi = value.indexOf(';');
  return (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase();
}

/** Header names lower-cased, so user headers can be merged with ours without duplicates. */
export function lowercaseHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
