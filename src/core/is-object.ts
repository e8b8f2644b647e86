/** A JSON object: not null, not an array (what a parsed body, capabilities or stored record must be). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
