/**
 * `npm run layering` (part of `npm run check`): no two folders of src/ and machines/ import each
 * other, at any depth (src/transports and src/transports/http are two folders). The direction
 * between the layers is the boundaries rule's job (eslint.config.js); this check also holds the
 * rooms inside one layer to one direction. Prints each pair with the imports that make it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

/** One relative import: both files relative to the root, with forward slashes. */
export interface FileImport {
  from: string;
  to: string;
}

export interface TwoWayPair {
  folders: [string, string];
  imports: FileImport[];
}

/** Every relative import of the .ts files under `folders` of `root` (type imports, re-exports and import() too). */
export function relativeImports(root: string, folders: readonly string[]): FileImport[] {
  const imports: FileImport[] = [];
  for (const file of folders.flatMap((folder) => tsFiles(root, folder))) {
    const text = readFileSync(path.join(root, file), 'utf8');
    for (const { fileName: specifier } of ts.preProcessFile(text, true, true).importedFiles) {
      if (!specifier.startsWith('.')) continue;
      const target = path.posix.join(path.posix.dirname(file), specifier).replace(/\.js$/, '.ts');
      imports.push({ from: file, to: target });
    }
  }
  return imports;
}

/** The folder pairs that import each other (no exceptions). */
export function twoWayPairs(imports: readonly FileImport[]): TwoWayPair[] {
  const byDirection = new Map<string, FileImport[]>();
  for (const entry of imports) {
    const from = path.posix.dirname(entry.from);
    const to = path.posix.dirname(entry.to);
    if (from === to) continue;
    const key = `${from} ${to}`;
    byDirection.set(key, [...(byDirection.get(key) ?? []), entry]);
  }
  const pairs: TwoWayPair[] = [];
  for (const [key, there] of byDirection) {
    const [from = '', to = ''] = key.split(' ');
    const back = byDirection.get(`${to} ${from}`);
    if (back !== undefined && from < to) pairs.push({ folders: [from, to], imports: [...there, ...back] });
  }
  return pairs;
}

function tsFiles(root: string, folder: string): string[] {
  return readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => path.posix.join(folder, name.split(path.sep).join('/')));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = path.resolve(import.meta.dirname, '..');
  const pairs = twoWayPairs(relativeImports(root, ['src', 'machines']));
  for (const { folders, imports } of pairs) {
    console.error(`${folders[0]} <-> ${folders[1]}`);
    for (const { from, to } of imports) console.error(`  ${from} -> ${to}`);
  }
  if (pairs.length > 0) {
    console.error(`${pairs.length} folder pair(s) import each other both ways (docs/architecture.md, "Layers")`);
    process.exit(1);
  }
}
