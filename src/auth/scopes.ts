/**
 * Scope selection (MCP 2025-11-25 "Scope Selection Strategy"): the challenge's `scope` is
 * authoritative; otherwise the protected resource's `scopes_supported`; otherwise no `scope` at
 * all. `offline_access` is added only when the authorization server lists it (SEP-2207).
 */

export interface ScopeInputs {
  challengeScope?: string | undefined;
  /** The user's `scope` option: replaces `scopes_supported`, never the challenge. */
  configuredScope?: string | undefined;
  resourceScopes?: readonly string[] | undefined;
  serverScopes?: readonly string[] | undefined;
  offlineAccess: boolean;
}

export function selectScope(inputs: ScopeInputs): string | undefined {
  const base = splitScope(inputs.challengeScope ?? inputs.configuredScope ?? inputs.resourceScopes?.join(' '));
  // Asking for offline_access alone would narrow a server's default scope to just that.
  if (
    base.length > 0 &&
    inputs.offlineAccess &&
    inputs.serverScopes?.includes('offline_access') &&
    !base.includes('offline_access')
  )
    base.push('offline_access');
  return joinScope(base);
}

/** The union, in first-seen order, of several space-separated scope strings. */
export function unionScopes(...scopes: (string | undefined)[]): string | undefined {
  const all: string[] = [];
  for (const scope of scopes) for (const s of splitScope(scope)) if (!all.includes(s)) all.push(s);
  return joinScope(all);
}

/** True when every scope in `required` is in `granted`. */
export function scopesCover(granted: string | undefined, required: string | undefined): boolean {
  const have = new Set(splitScope(granted));
  return splitScope(required).every((s) => have.has(s));
}

function splitScope(scope: string | undefined): string[] {
  return scope ? scope.split(/\s+/).filter((s) => s !== '') : [];
}

function joinScope(scopes: string[]): string | undefined {
  return scopes.length > 0 ? scopes.join(' ') : undefined;
}
