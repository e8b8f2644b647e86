/**
 * SEP-2243 custom headers from tool parameters (spec 2026-07-28, Streamable HTTP "Custom Headers
 * from Tool Parameters"): a property of a tool's `inputSchema` marked `x-mcp-header: Name` is
 * mirrored into an `Mcp-Param-Name` request header on `tools/call`. A tool whose annotations
 * break the spec's constraints is invalid: an HTTP client must leave it out of `tools/list`.
 */

const X_MCP_HEADER = 'x-mcp-header';
/** RFC 9110 `token` (`1*tchar`): no spaces, control characters, non-ASCII or delimiters. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const PRIMITIVE_TYPES = new Set(['string', 'integer', 'boolean']);
/** Keywords whose subschemas are not reachable by a chain of `properties` keys: an annotation there is invalid. */
const UNREACHABLE_KEYWORDS = [
  'items',
  'prefixItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'patternProperties',
  'dependentSchemas',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  '$defs',
  'definitions',
] as const;
/** Keywords whose value maps names to subschemas. */
const SCHEMA_MAPS = new Set(['patternProperties', 'dependentSchemas', '$defs', 'definitions']);

export interface HeaderDeclaration {
  /** The `properties` keys leading to the annotated property. */
  readonly path: readonly string[];
  /** The name part of `Mcp-Param-{name}`, as the server spelled it. */
  readonly name: string;
}

export type ToolHeaderScan =
  | { readonly valid: true; readonly declarations: readonly HeaderDeclaration[] }
  | { readonly valid: false; readonly reason: string };

const NONE: ToolHeaderScan = { valid: true, declarations: [] };

/** The tool's header declarations, or the first constraint one of them breaks. */
export function scanToolHeaders(inputSchema: unknown): ToolHeaderScan {
  const declarations: HeaderDeclaration[] = [];
  const seen = new Map<string, string>();
  const reason = visit(inputSchema, [], true, declarations, seen);
  if (reason !== undefined) return { valid: false, reason };
  return declarations.length === 0 ? NONE : { valid: true, declarations };
}

function visit(
  node: unknown,
  path: string[],
  reachable: boolean,
  declarations: HeaderDeclaration[],
  seen: Map<string, string>,
): string | undefined {
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
  const schema = node as Record<string, unknown>;
  if (Object.hasOwn(schema, X_MCP_HEADER)) {
    const where = path.length === 0 ? 'the schema root' : `property '${path.join('.')}'`;
    if (!reachable || path.length === 0)
      return `x-mcp-header on ${where} is not reachable by a chain of 'properties' keys from the root`;
    const name = schema[X_MCP_HEADER];
    if (typeof name !== 'string' || name.length === 0) return `x-mcp-header on ${where} is empty or not a string`;
    if (!TOKEN.test(name))
      return `x-mcp-header ${JSON.stringify(name)} on ${where} is not an HTTP field-name token (no spaces, control characters, non-ASCII or delimiters)`;
    const type = schema.type;
    if (typeof type !== 'string' || !PRIMITIVE_TYPES.has(type))
      return `x-mcp-header ${JSON.stringify(name)} on ${where} has type ${JSON.stringify(type ?? null)}: only string, integer and boolean may be mirrored`;
    const key = name.toLowerCase();
    const earlier = seen.get(key);
    if (earlier !== undefined)
      return `x-mcp-header ${JSON.stringify(name)} on ${where} repeats ${JSON.stringify(earlier)} (names are case-insensitive)`;
    seen.set(key, name);
    declarations.push({ path: [...path], name });
  }
  const properties = schema.properties;
  if (typeof properties === 'object' && properties !== null) {
    for (const [key, child] of Object.entries(properties)) {
      const reason = visit(child, [...path, key], reachable, declarations, seen);
      if (reason !== undefined) return reason;
    }
  }
  for (const keyword of UNREACHABLE_KEYWORDS) {
    const sub = schema[keyword];
    if (sub === undefined) continue;
    const branches = Array.isArray(sub)
      ? sub
      : SCHEMA_MAPS.has(keyword) && typeof sub === 'object' && sub !== null
        ? Object.values(sub)
        : [sub];
    for (const branch of branches) {
      const reason = visit(branch, [...path, `<${keyword}>`], false, declarations, seen);
      if (reason !== undefined) return reason;
    }
  }
  return undefined;
}

/** A primitive argument as the spec's type conversion says; undefined: no header (null, absent, not a primitive). */
function headerText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  // Integers outside JavaScript's safe range cannot be compared exactly by the server: no header.
  if (typeof value === 'number' && Number.isFinite(value) && (!Number.isInteger(value) || Number.isSafeInteger(value)))
    return String(value);
  return undefined;
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const key of path) {
    if (typeof node !== 'object' || node === null || Array.isArray(node) || !Object.hasOwn(node, key)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** The `mcp-param-*` headers for one call's arguments (lowercase names, values encoded); undefined when none. */
export function mirroredHeaders(
  declarations: readonly HeaderDeclaration[],
  args: unknown,
): Record<string, string> | undefined {
  let headers: Record<string, string> | undefined;
  for (const declaration of declarations) {
    const text = headerText(valueAt(args, declaration.path));
    if (text === undefined) continue;
    (headers ??= {})[`mcp-param-${declaration.name.toLowerCase()}`] = encodeHeaderValue(text);
  }
  return headers;
}

/**
 * Visible ASCII and inner spaces/tabs; no leading or trailing whitespace.
 *
 * SEP-2243 Value Encoding for the values MCP mirrors into request headers (`Mcp-Name`,
 * `Mcp-Param-*`): a value that is not plain header-safe ASCII (or looks like the sentinel itself)
 * travels as `=?base64?…?=`.
 */
const PLAIN_HEADER_VALUE = /^(?:[\x21-\x7E](?:[\x20\x21-\x7E\t]*[\x21-\x7E])?)?$/;
const SENTINEL = /^=\?base64\?.*\?=$/;

/** A header value as the spec's Value Encoding says: as is, or the Base64 sentinel. */
export function encodeHeaderValue(value: string): string {
  if (value !== '' && PLAIN_HEADER_VALUE.test(value) && !SENTINEL.test(value)) return value;
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}
