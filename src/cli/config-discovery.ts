/** With no `--config`: the project's own MCP config file, as Claude Code, Cursor and VS Code keep it. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/** In the order they are tried. */
export const PROJECT_CONFIG_FILES = ['.mcp.json', '.cursor/mcp.json', '.vscode/mcp.json'] as const;

/** `./.mcp.json`, `./.cursor/mcp.json` or `./.vscode/mcp.json`: the first that exists in `folder`. */
export function discoverConfig(folder: string = process.cwd()): string | undefined {
  const found = PROJECT_CONFIG_FILES.find((file) => existsSync(join(folder, file)));
  return found === undefined ? undefined : `./${found}`;
}

/** `--config` as given; else, when no server is named otherwise, the discovered file (and `say` which). */
export function configFiles(
  values: {
    config?: string[] | undefined;
    url?: string | undefined;
    command?: string | undefined;
    demo?: boolean | undefined;
  },
  say: (line: string) => void,
): string[] {
  if (values.config !== undefined) return values.config;
  if (values.url !== undefined || values.command !== undefined || values.demo) return [];
  const found = discoverConfig();
  if (found === undefined) return [];
  say(`using ${found} (found in this folder; --config <file> to choose another)`);
  return [found];
}
