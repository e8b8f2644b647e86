/** The checked-in diagrams match the machines; run `npm run diagrams` after changing a machine. */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { embedDiagrams, toMermaid } from '../../src/cli/mermaid.js';
import { MACHINES } from '../../machines/index.js';

const dir = new URL('../../docs/machines/', import.meta.url);

describe('docs/machines diagrams', () => {
  it.each(Object.entries(MACHINES))('%s.mmd is up to date', (name, machine) => {
    const onDisk = readFileSync(new URL(`${name}.mmd`, dir), 'utf8');
    expect(onDisk, `docs/machines/${name}.mmd is stale: run npm run diagrams`).toBe(toMermaid(machine));
  });

  it.each(['docs/architecture.md'])('the diagram blocks in %s are up to date', (doc) => {
    const text = readFileSync(new URL(`../../${doc}`, import.meta.url), 'utf8');
    expect(text).toContain('<!-- diagram:connection:start -->');
    expect(text, `${doc} is stale: run npm run diagrams`).toBe(embedDiagrams(text, MACHINES));
  });

  it('every machine file is in the catalog', () => {
    const files = readdirSync(new URL('../../machines/', import.meta.url)).filter((f) => f.endsWith('.machine.ts'));
    expect(files.map((f) => f.replace('.machine.ts', '')).sort()).toEqual(Object.keys(MACHINES).sort());
  });

  it('draws states, guards, timed transitions, entry actions and invoked actors', () => {
    const text = toMermaid(MACHINES.connection);
    expect(text).toContain('expired : entry / forget session');
    expect(text).toContain('initializing : invoke handshake');
    expect(text).toContain('ready --> ready: after session proven delay / reset restart budget, report session proven');
    expect(text).toContain('ready --> expired: SESSION_EXPIRED [is current session]');
    expect(text).toContain('any_state --> closing: CLOSE');
    expect(text).toContain('ready__opening_listener --> ready__serving: after listener open timeout');
  });
});
