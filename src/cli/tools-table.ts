/** `tools`' readable form: one row per tool — its name, its arguments (`*` required) and the first line of its description. */

interface ToolLike {
  name: string;
  description?: string | undefined;
  inputSchema?: Record<string, unknown> | undefined;
}

interface InputSchema {
  properties?: Record<string, { type?: unknown } | undefined>;
  required?: unknown;
}

const DESCRIPTION_WIDTH = 72;

/** `text*: string, count: integer` */
function argumentsOf(tool: ToolLike): string {
  const schema = (tool.inputSchema ?? {}) as InputSchema;
  const properties = schema.properties ?? {};
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const names = Object.keys(properties);
  if (names.length === 0) return '-';
  return names
    .map((name) => {
      const type = properties[name]?.type;
      const typeText = Array.isArray(type) ? type.join('|') : typeof type === 'string' ? type : 'any';
      return `${name}${required.has(name) ? '*' : ''}: ${typeText}`;
    })
    .join(', ');
}

function firstLine(text: string | undefined, width: number): string {
  const line = (text ?? '').split('\n')[0]!.trim();
  return line.length <= width ? line : `${line.slice(0, width - 1)}…`;
}

/** The table's lines, columns padded; a legend line under it when an argument is required. */
export function toolsTable(tools: readonly ToolLike[], descriptionWidth = DESCRIPTION_WIDTH): string[] {
  const rows = [
    ['TOOL', 'ARGUMENTS', 'DESCRIPTION'],
    ...tools.map((tool) => [tool.name, argumentsOf(tool), firstLine(tool.description, descriptionWidth)]),
  ];
  const widths = [0, 1].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = rows.map((row) => `${row[0]!.padEnd(widths[0]!)}  ${row[1]!.padEnd(widths[1]!)}  ${row[2]}`.trimEnd());
  if (tools.length === 0) lines.push('(no tools)');
  else if (rows.some((row) => row[1]!.includes('*:'))) lines.push('', '* required');
  return lines;
}
