/**
 * The URL keys other hosts write for a remote server, read as `url`:
 * - Windsurf's `serverUrl` (mcp_config.json): a Streamable HTTP or SSE endpoint, the transport
 *   chosen by the host → `type: 'auto'` unless a `type` is given (a path ending in /sse: SSE).
 * - Gemini CLI's `httpUrl` (settings.json): a Streamable HTTP endpoint → `type: 'http'`. (Gemini's
 *   own `url` means SSE; here `url` probes and falls back to SSE, so it connects either way.)
 */
import { ConfigError } from '../core/errors.js';

const HOST_URL_KEYS = {
  serverUrl: { host: 'Windsurf', type: undefined },
  httpUrl: { host: 'Gemini CLI', type: 'http' },
} as const;

type HostUrlKey = keyof typeof HOST_URL_KEYS;

/**
 * The entry with `serverUrl` / `httpUrl` moved to `url` (symbols kept); the same object when it
 * has neither. Two URL keys at once is a ConfigError naming both.
 */
export function withHostUrl<T>(server: string, entry: T): T {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return entry;
  const record = entry as Record<string, unknown>;
  const present = (Object.keys(HOST_URL_KEYS) as HostUrlKey[]).filter((key) => record[key] !== undefined);
  if (present.length === 0) return entry;
  const keys = [...(record.url !== undefined ? ['url'] : []), ...present];
  if (keys.length > 1) {
    const path = `servers.${server}`;
    const message = `has ${keys.map((key) => `\`${key}\``).join(' and ')}: give one URL (\`serverUrl\` is Windsurf's name for \`url\`, \`httpUrl\` Gemini CLI's for a Streamable HTTP \`url\`)`;
    throw new ConfigError(`invalid configuration: ${path}: ${message}`, [{ path, message }]);
  }
  const key = present[0]!;
  const { [key]: url, ...rest } = record;
  const type = HOST_URL_KEYS[key].type;
  return { ...rest, url, ...(type !== undefined && rest.type === undefined ? { type } : {}) } as T;
}
