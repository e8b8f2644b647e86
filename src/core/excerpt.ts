/** A short, one-line quote of a text a peer sent (a body, a description) for an error message. */
export function excerpt(text: string, max = 120): string {
  // Only the head is quoted: no need to rewrite a body of megabytes first.
  const oneLine = (text.length > 4 * max ? text.slice(0, 4 * max) : text).replace(/\s+/g, ' ');
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}
