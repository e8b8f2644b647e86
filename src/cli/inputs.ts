/**
 * VS Code's `${input:id}` values for the CLI: `--input id=value` (repeatable), and on a terminal a
 * prompt for each one still missing, masked when its declaration says `"password": true`. Without
 * a terminal nothing is asked: the loader's error names the input and the flag.
 */
import { readFileSync } from 'node:fs';
import { parseJsonText } from '../config/json-text.js';
import { UsageError } from './load-config.js';

export interface InputDeclaration {
  id: string;
  description: string | undefined;
  password: boolean;
}

/** `--input id=value` → `{ id: value }`. */
export function parseInputFlags(flags: readonly string[]): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const flag of flags) {
    const at = flag.indexOf('=');
    if (at <= 0) throw new UsageError(`--input '${flag.includes('=') ? '=…' : flag}': expected id=value`);
    inputs[flag.slice(0, at)] = flag.slice(at + 1);
  }
  return inputs;
}

const REFERENCE = /\$\{input:([^}]+)\}/g;

/** The inputs the files refer to, in order of first use, with what their `inputs` declarations say. */
export function referencedInputs(files: readonly string[]): InputDeclaration[] {
  const found = new Map<string, InputDeclaration>();
  for (const file of files) {
    let text: string;
    let json: unknown;
    try {
      text = readFileSync(file, 'utf8');
      json = parseJsonText(text);
    } catch {
      continue; // the loader reports an unreadable or invalid file, with its line and column
    }
    type Declared = { id?: unknown; description?: unknown; password?: unknown };
    const declared = new Map<string, Declared>();
    const list = (json as { inputs?: unknown } | null)?.inputs;
    for (const input of Array.isArray(list) ? (list as Declared[]) : [])
      if (typeof input?.id === 'string') declared.set(input.id, input);
    for (const [, id] of text.matchAll(REFERENCE)) {
      if (found.has(id!)) continue;
      const declaration = declared.get(id!);
      found.set(id!, {
        id: id!,
        description: typeof declaration?.description === 'string' ? declaration.description : undefined,
        password: declaration?.password === true,
      });
    }
  }
  return [...found.values()];
}

export interface PromptStreams {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
}

/**
 * `given`, completed by asking for every referenced input it lacks — only when both streams
 * are a terminal (or `interactive` says so).
 */
export async function completeInputs(
  files: readonly string[],
  given: Readonly<Record<string, string>>,
  streams: PromptStreams = { input: process.stdin, output: process.stderr },
  interactive = streams.input.isTTY === true && streams.output.isTTY === true,
): Promise<Record<string, string>> {
  const inputs = { ...given };
  if (!interactive) return inputs;
  const missing = referencedInputs(files).filter((input) => !Object.hasOwn(inputs, input.id));
  if (missing.length === 0) return inputs;
  const { read } = await import('read');
  for (const input of missing) {
    const label = input.description ? `${input.description} (${input.id})` : input.id;
    inputs[input.id] = await read({
      prompt: `${label}: `,
      silent: input.password,
      replace: input.password ? '*' : undefined,
      input: streams.input,
      output: streams.output,
      terminal: true,
    });
  }
  return inputs;
}
