/**
 * The runtime model suite must be able to fail: each mutant of runtime/mutants.ts (a replay rule,
 * the gate, the probe verdict, the machine, the era rules) is put in place of its source file and
 * the model paths are walked through the real runtime again; at least one must fail. A control
 * run through the same mechanism with an unchanged copy must fail none, so a failure is the
 * mutant's doing and not the mechanism's.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MUTANTS, type Mutant } from './runtime/mutants.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const workspace = mkdtempSync(join(tmpdir(), 'mcp-supervisor-mutants-'));

/** The edited source, written outside the tree with its relative imports made absolute. */
function writeMutant(mutant: Mutant, index: number): string {
  const original = join(ROOT, mutant.file);
  const source = readFileSync(original, 'utf8');
  const edited = source.replace(mutant.find, mutant.replace);
  const absolute = edited.replace(/(['"])(\.{1,2}\/[^'"\n]+)\1/g, (_, quote: string, spec: string) => {
    return quote + resolve(dirname(original), spec) + quote;
  });
  const path = join(workspace, `mutant-${index}-${mutant.file.replaceAll('/', '_')}`);
  writeFileSync(path, absolute);
  return path;
}

function occurrences(text: string, part: string): number {
  return text.split(part).length - 1;
}

/** Walks the suite's paths on freshly loaded modules; stops at the first failing path. */
async function firstFailure(suite: Mutant['suite']): Promise<string | undefined> {
  const { autoEraPaths, runtimeSpec, walk } = await import('./runtime/connection-runtime.spec.js');
  const { transitionPaths } = await import('./runner.js');
  const { Coverage } = await import('./coverage.js');
  const { connectionMachine } = await import('../../machines/connection.machine.js');
  const coverage = new Coverage(connectionMachine);
  const paths = suite === 'auto' ? autoEraPaths() : transitionPaths(runtimeSpec);
  expect(paths.length).toBeGreaterThan(0);
  for (const path of paths) {
    try {
      await walk(path, coverage, suite === 'auto' ? 'auto' : undefined);
    } catch {
      return path.name;
    }
  }
  return undefined;
}

async function runWith(mutant: Mutant, index: number): Promise<string | undefined> {
  const original = join(ROOT, mutant.file);
  const replacement = writeMutant(mutant, index);
  vi.resetModules();
  vi.doMock(original, () => import(replacement));
  try {
    return await firstFailure(mutant.suite);
  } finally {
    vi.doUnmock(original);
    vi.resetModules();
  }
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

describe('runtime mutants', () => {
  // The control walks every path (a mutant stops at its first failure): 3.6 s alone, 7-9 s on two
  // loaded cores, past 20 s when the machine is loaded further. Its bound is the walk's, not a hang's.
  it.each(['pinned', 'auto'] as const)(
    'control: an unchanged copy fails no %s path',
    async (suite) => {
      const control = MUTANTS.find((m) => m.suite === suite)!;
      const failed = await runWith({ ...control, replace: control.find }, -1);
      expect(failed, `the mechanism alone failed a path: ${failed}`).toBeUndefined();
    },
    60_000,
  );

  MUTANTS.forEach((mutant, index) => {
    it(`${mutant.name} fails a ${mutant.suite} path`, async () => {
      const source = readFileSync(join(ROOT, mutant.file), 'utf8');
      expect(occurrences(source, mutant.find), `the mutant no longer matches ${mutant.file}`).toBe(1);
      const failed = await runWith(mutant, index);
      expect(failed, 'no path failed with the mutant in place').toBeDefined();
    });
  });
});
