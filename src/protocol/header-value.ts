/**
 * SEP-2243 Value Encoding for the values MCP mirrors into request headers (`Mcp-Name`,
 * `Mcp-Param-*`): a value that is not plain header-safe ASCII (or looks like the sentinel itself)
 * travels as `=?base64?…?=`.
 */

/** Visible ASCII and inner spaces/tabs; no leading or trailing whitespace. */
const PLAIN_HEADER_VALUE = /^(?:[\x21-\x7E](?:[\x20\x21-\x7E\t]*[\x21-\x7E])?)?$/;
const SENTINEL = /^=\?base64\?.*\?=$/;

/** A header value as the spec's Value Encoding says: as is, or the Base64 sentinel. */
export function encodeHeaderValue(value: string): string {
  if (value !== '' && PLAIN_HEADER_VALUE.test(value) && !SENTINEL.test(value)) return value;
  return `=?base64?${Buffer.from(value, 'utf8').toString('base64')}?=`;
}
