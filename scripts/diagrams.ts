/**
 * Writes docs/machines/<name>.mmd from the machine definitions and refreshes the diagram blocks
 * in README.md and docs/architecture.md: `npm run diagrams`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { embedDiagrams, toMermaid } from '../src/diagram.js';
import { MACHINES } from '../src/machines-catalog.js';

for (const [name, machine] of Object.entries(MACHINES)) {
  writeFileSync(new URL(`../docs/machines/${name}.mmd`, import.meta.url), toMermaid(machine));
  console.log(`wrote docs/machines/${name}.mmd`);
}
for (const doc of ['../README.md', '../docs/architecture.md']) {
  const file = new URL(doc, import.meta.url);
  const before = readFileSync(file, 'utf8');
  const after = embedDiagrams(before, MACHINES);
  if (after !== before) {
    writeFileSync(file, after);
    console.log(`updated ${doc.slice(3)}`);
  }
}
