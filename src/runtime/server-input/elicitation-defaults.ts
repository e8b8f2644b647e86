/**
 * SEP-1034: an accepted elicitation form leaves out fields the user did not touch; the client
 * fills them with the defaults of the requested schema, so the server sees complete content.
 */
interface PropertySchema {
  default?: unknown;
}

export function applyElicitationDefaults(
  params: Record<string, unknown>,
  result: Record<string, unknown>,
): Record<string, unknown> {
  if (result?.action !== 'accept') return result;
  const schema = params.requestedSchema as { properties?: Record<string, PropertySchema> } | undefined;
  const properties = schema?.properties;
  if (!properties || typeof properties !== 'object') return result;
  const content = { ...((result.content as Record<string, unknown> | undefined) ?? {}) };
  for (const [key, property] of Object.entries(properties)) {
    if (content[key] === undefined && property && typeof property === 'object' && 'default' in property)
      content[key] = property.default;
  }
  return { ...result, content };
}
