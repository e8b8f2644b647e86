/**
 * `npx mcp-remote <url>`: the stdio bridge Claude Desktop configs use to reach a remote server.
 * Supervised as a stdio child, the bridge hides what happens behind it (a lost session, a
 * restarted server, a 401): the supervisor sees a process that keeps running. Such an entry is
 * recognised and the URL named, to connect to directly.
 */

/** Runners that fetch and run a package: `npx -y mcp-remote …`, `pnpm dlx mcp-remote …`, `bunx mcp-remote …`. */
const RUNNERS = new Set(['npx', 'bunx', 'pnpx', 'pnpm', 'yarn', 'npm']);

/** The remote server an `mcp-remote` entry bridges to (without its query or credentials), if this is one. */
export function mcpRemoteTarget(command: unknown, args: unknown): string | undefined {
  if (typeof command !== 'string' || !Array.isArray(args)) return undefined;
  const words = [command, ...(args as unknown[])].filter((word): word is string => typeof word === 'string');
  const runner = words[0]!
    .split(/[\\/]/)
    .pop()!
    .replace(/\.(cmd|exe)$/i, '');
  const at = words.findIndex((word) => /^mcp-remote(@[^/\s]*)?$/.test(word));
  if (at < 0 || (at > 0 && !RUNNERS.has(runner)) || (at === 0 && runner !== 'mcp-remote')) return undefined;
  const url = words.slice(at + 1).find((word) => /^https?:\/\//.test(word));
  if (!url || !URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  return `${parsed.origin}${parsed.pathname}`;
}

/** The advice, for a config warning and for `doctor`. */
export function mcpRemoteAdvice(target: string): { message: string; fix: string } {
  return {
    message: `runs mcp-remote, a stdio bridge to ${target}: restarts and lost sessions behind it are hidden from the supervisor`,
    fix: `connect to the URL directly: "url": "${target}" (a --header goes in "headers", its OAuth in "auth": {})`,
  };
}
