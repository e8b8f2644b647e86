/** Writes docs/machines/<name>.mmd from the machine definitions: `npm run diagrams`. */
import { writeFileSync } from 'node:fs';
import { toMermaid } from '../src/diagram.js';
import { MACHINES } from '../src/machines-catalog.js';

for (const [name, machine] of Object.entries(MACHINES)) {
  const file = new URL(`../docs/machines/${name}.mmd`, import.meta.url);
  writeFileSync(file, toMermaid(machine));
  console.log(`wrote docs/machines/${name}.mmd`);
}
