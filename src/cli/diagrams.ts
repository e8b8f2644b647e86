/**
 * `diagram [machine]`: Mermaid `stateDiagram-v2` text generated from the machine definitions.
 * `npm run diagrams` writes docs/machines/*.mmd through the same functions.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toMermaid } from './mermaid.js';
import { MACHINES, type MachineName } from '../../machines/index.js';
import { UsageError } from './load-config.js';

export const MACHINE_NAMES = Object.keys(MACHINES) as MachineName[];

function isMachineName(name: string): name is MachineName {
  return Object.hasOwn(MACHINES, name);
}

/** One machine's diagram, exactly as in docs/machines/<name>.mmd; all of them (each after a `%% name` comment) without a name. */
export function diagramText(name?: string): string {
  if (name === undefined) return MACHINE_NAMES.map((each) => `%% ${each}\n${toMermaid(MACHINES[each])}`).join('\n');
  if (!isMachineName(name)) throw new UsageError(`unknown machine '${name}': one of ${MACHINE_NAMES.join(', ')}`);
  return toMermaid(MACHINES[name]);
}

/** Writes `<dir>/<name>.mmd` for every machine (or the one named); returns the paths written. */
export function writeDiagramFiles(dir: string, name?: string): string[] {
  const names = name === undefined ? MACHINE_NAMES : [name];
  return names.map((each) => {
    const file = join(dir, `${each}.mmd`);
    writeFileSync(file, diagramText(each));
    return file;
  });
}
