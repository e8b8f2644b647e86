/**
 * The canonical resource URI (RFC 8707, MCP "canonical server URI") that names the MCP server in
 * authorization and token requests, and the check that protected resource metadata really
 * describes that server.
 */

/** Scheme and host lower-cased (URL does it), no fragment, no trailing slash on a bare origin. */
export function canonicalResource(url: URL): string {
  const copy = new URL(url.href);
  copy.hash = '';
  if (copy.pathname === '/' && copy.search === '') return copy.origin;
  return copy.href;
}

/**
 * The `resource` parameter (RFC 8707) to send: the identifier exactly as the protected resource
 * metadata publishes it (a server may name a parent path or its origin, with or without a
 * trailing slash), else the canonical server URI when there is no metadata (2025-03-26 servers).
 */
export function resourceIndicator(published: string | undefined, serverUrl: URL): string {
  return published ?? canonicalResource(serverUrl);
}

/**
 * True when a protected resource metadata `resource` covers the server URL: same origin, and the
 * metadata path is the server path or a parent of it on a segment boundary (metadata served at
 * the root may name the origin for every path under it).
 */
export function resourceCovers(metadataResource: string, serverUrl: URL): boolean {
  let declared: URL;
  try {
    declared = new URL(metadataResource);
  } catch {
    return false;
  }
  if (declared.origin !== serverUrl.origin) return false;
  const base = stripTrailingSlash(declared.pathname);
  const path = stripTrailingSlash(serverUrl.pathname);
  return base === '' || path === base || path.startsWith(`${base}/`);
}

function stripTrailingSlash(path: string): string {
  return path.endsWith('/') ? path.slice(0, -1) : path;
}
