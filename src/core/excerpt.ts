/** A short, one-line quote of a text a peer sent (a body, a description) for an error message. */
export function excerpt(text: string, max = 120): string {
  // Only the head is quoted: no need to rewrite a body of megabytes first.
  const oneLine = (text.length > 4 * max ? text.slice(0, 4 * max) : text).replace(/\s+/g, ' ');
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}

/** An HTML page (a proxy's or a framework's error page) as its visible text: tags, scripts and styles dropped. */
export function htmlText(html: string): string {
  return html
    .replace(/<(script|style)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Whether a body is an HTML page rather than a message. */
export function looksLikeHtml(text: string): boolean {
  return /^\s*(<!doctype html|<html|<head|<body)/i.test(text);
}
