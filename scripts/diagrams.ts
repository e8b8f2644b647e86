/**
 * `npm run diagrams`: writes docs/machines/<name>.mmd through the CLI's `diagram` code path
 * (the same as `mcp-supervisor diagram --out docs/machines`) and refreshes the diagram blocks
 * in docs/architecture.md.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { writeDiagramFiles } from '../src/cli/diagrams.js';
import { embedDiagrams } from '../src/cli/mermaid.js';
import { MACHINES } from '../machines/index.js';

for (const file of writeDiagramFiles(fileURLToPath(new URL('../docs/machines/', import.meta.url)))) {
  console.log(`wrote ${file}`);
}
for (const doc of ['../docs/architecture.md']) {
  const file = new URL(doc, import.meta.url);
  const before = readFileSync(file, 'utf8');
  const after = embedDiagrams(before, MACHINES);
  if (after !== before) {
    writeFileSync(file, after);
    console.log(`updated ${doc.slice(3)}`);
  }
}
