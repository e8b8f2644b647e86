/**
 * Every machine gets model-based tests: `machines/<name>.machine.ts` needs
 * `test/model/<name>.model.test.ts`, and that file must register the model suite (paths plus
 * the transition-coverage gate) for that very machine.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const machinesDir = join(here, '..', '..', 'machines');
const machines = readdirSync(machinesDir)
  .filter((file) => file.endsWith('.machine.ts'))
  .map((file) => file.slice(0, -'.machine.ts'.length))
  .sort();
const modelTests = new Set(readdirSync(here).filter((file) => file.endsWith('.model.test.ts')));

describe('model-test gate', () => {
  it('finds the machines', () => {
    expect(machines).toEqual(expect.arrayContaining(['connection', 'listener', 'supervisor']));
  });

  it.each(machines)('machines/%s.machine.ts has test/model/%s.model.test.ts running its model suite', (name) => {
    const file = `${name}.model.test.ts`;
    expect(modelTests.has(file), `missing test/model/${file}`).toBe(true);
    const source = readFileSync(join(here, file), 'utf8');
    expect(source, `${file} must import machines/${name}.machine.js`).toContain(`machines/${name}.machine.js'`);
    expect(source, `${file} must call modelSuite(...)`).toMatch(/\bmodelSuite\(/);
  });
});
