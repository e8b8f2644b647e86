/**
 * Exposed tool names: what an LLM provider sees. Providers accept `^[a-zA-Z0-9_-]{1,64}$`, MCP
 * tool names are freer (dots, slashes, 128 characters), and two servers may both have `search`.
 * The rules, in order (docs/agents.md repeats them):
 *
 * 1. The name is `<prefix><separator><tool>` (prefix = the server's name by default, separator
 *    `__`), or the bare tool name when prefixing is off.
 * 2. Every character outside `[a-zA-Z0-9_-]` becomes `_`.
 * 3. A name longer than 64 characters is cut to 55 and gets `_` + 8 hex digits of a hash of the
 *    server's and the tool's original names.
 * 4. Collisions: entries are ordered by server name, then original tool name (code units). The
 *    first entry keeps the name; each later one gets `_2`, `_3`, … (cut to fit 64), the first
 *    suffix that no other entry uses.
 *
 * Same servers and tools in, same names out: the names depend on nothing else.
 */

export const MAX_TOOL_NAME_LENGTH = 64;
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
const HASH_DIGITS = 8;

/** What a name is built from. */
export interface NameSource {
  server: string;
  tool: string;
  /** The server's prefix; undefined: no prefix. */
  prefix: string | undefined;
}

/** Characters providers refuse become `_`; an empty result is `_`. */
export function sanitizeName(name: string): string {
  const clean = name.replace(/[^a-zA-Z0-9_-]/g, '_');
  return clean.length > 0 ? clean : '_';
}

/** FNV-1a, 32 bits: a short, stable fingerprint (not a security measure). */
function fingerprint(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(HASH_DIGITS, '0');
}

/** Rules 1-3: the name an entry asks for, before collisions. */
export function baseName(source: NameSource, separator: string): string {
  const tool = sanitizeName(source.tool);
  const name = source.prefix === undefined ? tool : `${sanitizeName(source.prefix)}${separator}${tool}`;
  if (name.length <= MAX_TOOL_NAME_LENGTH) return name;
  const keep = MAX_TOOL_NAME_LENGTH - HASH_DIGITS - 1;
  return `${name.slice(0, keep)}_${fingerprint(`${source.server}\u0000${source.tool}`)}`;
}

function withSuffix(name: string, n: number): string {
  const suffix = `_${n}`;
  return name.slice(0, MAX_TOOL_NAME_LENGTH - suffix.length) + suffix;
}

function compareEntries(a: NameSource, b: NameSource): number {
  if (a.server !== b.server) return a.server < b.server ? -1 : 1;
  if (a.tool !== b.tool) return a.tool < b.tool ? -1 : 1;
  return 0;
}

/**
 * Rule 4: an exposed name for every entry, unique across all of them. Returns the names in the
 * order of `sources`.
 */
export function assignNames(sources: readonly NameSource[], separator: string): string[] {
  const order = sources.map((_, index) => index).sort((a, b) => compareEntries(sources[a]!, sources[b]!));
  const bases = sources.map((source) => baseName(source, separator));
  const names = new Array<string | undefined>(sources.length);
  const used = new Set<string>();
  // First pass: each base name goes to its first claimant, so a suffix never takes a base name.
  for (const index of order) {
    const base = bases[index]!;
    if (used.has(base)) continue;
    used.add(base);
    names[index] = base;
  }
  for (const index of order) {
    if (names[index] !== undefined) continue;
    let n = 2;
    while (used.has(withSuffix(bases[index]!, n))) n++;
    const name = withSuffix(bases[index]!, n);
    used.add(name);
    names[index] = name;
  }
  return names as string[];
}
