/**
 * The package built once per test run (`tsc -p tsconfig.build.json`) and shared by the files that
 * check the built code (exports.test.ts, adapters/package.test.ts): each copies the build into its
 * own folder. The build is keyed by the contents of what it compiles, so an edit rebuilds it; test
 * files in other workers wait for the one that builds (a lock folder, created atomically).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const BUILDS = join(ROOT, '.tmp', 'package-build');
/** A lock older than this was left by a run that died mid-build. */
const STALE_LOCK_MS = 300_000;

function sourcesHash(): string {
  const hash = createHash('sha256');
  const add = (path: string): void => {
    if (statSync(path).isDirectory()) for (const name of readdirSync(path).sort()) add(join(path, name));
    else hash.update(path).update(readFileSync(path));
  };
  for (const path of ['src', 'machines', 'tsconfig.json', 'tsconfig.build.json', 'package.json']) add(join(ROOT, path));
  return hash.digest('hex').slice(0, 16);
}

/** The folder holding `dist/`, built from the current sources. */
export async function builtPackage(): Promise<string> {
  const dir = join(BUILDS, sourcesHash());
  const done = join(dir, 'done');
  const lock = `${dir}.lock`;
  mkdirSync(BUILDS, { recursive: true });
  for (;;) {
    if (existsSync(done)) return dir;
    try {
      mkdirSync(lock);
    } catch {
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    try {
      // Builds of older sources are of no use any more.
      for (const name of readdirSync(BUILDS))
        if (!name.endsWith('.lock')) rmSync(join(BUILDS, name), { recursive: true, force: true });
      await run(process.execPath, [TSC, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(dir, 'dist')]);
      writeFileSync(done, '');
      return dir;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}
