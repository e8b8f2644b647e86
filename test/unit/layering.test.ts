/**
 * The layering of docs/architecture.md ("Layers") is checked, and the checks can fail: the
 * boundaries rule of eslint.config.js reports an import that runs upward, and scripts/layering.ts
 * reports two folders that import each other. The fixtures are source text linted as if it lay
 * at the path given, so no violating file ever sits in the tree.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ESLint } from 'eslint';
import { afterAll, describe, expect, it } from 'vitest';
import { relativeImports, twoWayPairs } from '../../scripts/layering.js';

const root = path.resolve(import.meta.dirname, '../..');

// The project's own config, only its boundaries rules, and no type information (the fixtures
// exist only as text).
const eslint = new ESLint({
  cwd: root,
  ruleFilter: ({ ruleId }) => ruleId.startsWith('boundaries/'),
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
});

async function problems(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).map((message) => `${message.ruleId}: ${message.message}`);
}

const upward = (from: string, to: string) =>
  `boundaries/dependencies: There is no policy allowing dependencies from elements of type "${from}" to elements of type "${to}"`;

describe('the boundaries rule', () => {
  it('lets a layer import itself, the layers below it and machines/', async () => {
    const code = [
      "import { redact } from '../core/redact.js';",
      "import type { Transport } from '../transports/transport.js';",
      "import { restartDelay } from '../../machines/restart-policy.js';",
      "import { silentLogger } from './logger.js';",
      'export type T = Transport;',
      'export const used = [redact, restartDelay, silentLogger];',
    ].join('\n');
    expect(await problems('src/observe/fixture.ts', code)).toEqual([]);
  });

  it('reports an import that runs upward, a type import too', async () => {
    const code =
      "import type { TransitionEvent } from '../runtime/context/events.js';\nexport type T = TransitionEvent;\n";
    expect(await problems('src/core/fixture.ts', code)).toEqual([upward('core', 'runtime')]);
  });

  it('reports a re-export from the public face below it', async () => {
    expect(await problems('src/protocol/fixture.ts', "export { connect } from '../connect.js';\n")).toEqual([
      upward('protocol', 'face'),
    ]);
  });

  it('keeps the handle below the supervisor', async () => {
    const code = "import type { Supervisor } from '../supervisor/supervisor.js';\nexport type S = Supervisor;\n";
    expect(await problems('src/handle/fixture.ts', code)).toEqual([upward('handle', 'supervisor')]);
  });

  it('keeps the rooms of one level apart (catalog and tasks)', async () => {
    const code = "import { TaskNotFoundError } from '../tasks/errors.js';\nexport const e = TaskNotFoundError;\n";
    expect(await problems('src/catalog/fixture.ts', code)).toEqual([upward('catalog', 'tasks')]);
  });

  it('lets machines/ import only xstate and machines/', async () => {
    const code = [
      "import { setup } from 'xstate';",
      "import { setTimeout } from 'node:timers';",
      "import { ConfigError } from '../src/core/errors.js';",
      "import { restartDelay } from './restart-policy.js';",
      'export const used = [setup, setTimeout, ConfigError, restartDelay];',
    ].join('\n');
    const found = await problems('machines/fixture.ts', code);
    expect(found).toHaveLength(2);
    expect(found[0]).toContain('"node:timers"');
    expect(found[1]).toBe(upward('machines', 'core'));
  });

  it('refuses a folder of src/ that is not placed in the layers', async () => {
    const code = "import { ConfigError } from '../core/errors.js';\nexport const e = ConfigError;\n";
    expect(await problems('src/new-room/fixture.ts', code)).toEqual([upward('unlayered', 'core')]);
  });
});

describe('no two folders import each other', () => {
  const fixture = mkdtempSync(path.join(tmpdir(), 'layering-'));
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  it('finds a pair, type imports included, and names its imports', () => {
    mkdirSync(path.join(fixture, 'src/a'), { recursive: true });
    mkdirSync(path.join(fixture, 'src/b'), { recursive: true });
    writeFileSync(path.join(fixture, 'src/a/x.ts'), "import { y } from '../b/y.js';\nexport const x = y;\n");
    writeFileSync(path.join(fixture, 'src/a/z.ts'), 'export type Z = number;\n');
    writeFileSync(path.join(fixture, 'src/b/y.ts'), "import type { Z } from '../a/z.js';\nexport const y: Z = 1;\n");
    const imports = relativeImports(fixture, ['src']);
    expect(twoWayPairs(imports)).toEqual([
      {
        folders: ['src/a', 'src/b'],
        imports: [
          { from: 'src/a/x.ts', to: 'src/b/y.ts' },
          { from: 'src/b/y.ts', to: 'src/a/z.ts' },
        ],
      },
    ]);
  });

  it('holds for src/ and machines/', async () => {
    const imports = relativeImports(root, ['src', 'machines']);
    expect(twoWayPairs(imports)).toEqual([]);
  });
});
