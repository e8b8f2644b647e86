/**
 * Do the package's own declarations compile for a consumer? Packs the built package, installs
 * the tarball into an empty TypeScript project with the newest `@types/node` and the optional
 * peers (at the versions this repository tests with), imports every subpath of `exports`, and
 * type-checks with `skipLibCheck: false` under each supported TypeScript line (5.x and the newest
 * major). A diagnostic in our declarations (or in the consumer file) fails the check; the peers'
 * own declaration errors are counted and shown, not ours to fix.
 *
 * Needs `npm run build` first (`npm run check:consumer`). Last line: "consumer types: N passed, M failed".
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const TYPESCRIPT_LINES = { 'typescript 5': 'typescript@5', 'typescript latest': 'typescript@latest' };
const OPTIONAL_PEERS = Object.keys(readJson(join(ROOT, 'package.json')).peerDependencies ?? {});

function readJson(path: string): Record<string, any> {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function run(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The version of a peer this repository's own tests run against (its node_modules). */
function testedVersion(name: string): string {
  return readJson(join(ROOT, 'node_modules', name, 'package.json')).version;
}

const work = mkdtempSync(join(tmpdir(), 'mcp-supervisor-consumer-'));
let passed = 0;
let failed = 0;
try {
  const tarball = run('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work], ROOT).trim();
  const pkg = readJson(join(ROOT, 'package.json'));
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const installs = [
    join(work, tarball.split('\n').at(-1) ?? tarball),
    '@types/node@latest',
    ...Object.entries(TYPESCRIPT_LINES).map(([, spec], i) => `ts${i}@npm:${spec}`),
    ...OPTIONAL_PEERS.map((name) => `${name}@${testedVersion(name)}`),
  ];
  run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...installs], work);
  const subpaths = Object.keys(pkg.exports).filter((subpath) => subpath !== './package.json');
  const specifiers = subpaths.map((subpath) => (subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`));
  writeFileSync(
    join(work, 'index.ts'),
    specifiers.map((specifier, i) => `import * as m${i} from '${specifier}';`).join('\n') +
      `\nexport const modules = [${specifiers.map((_, i) => `m${i}`).join(', ')}];\n`,
  );
  writeFileSync(
    join(work, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        types: ['node'],
      },
      include: ['index.ts'],
    }),
  );
  const typesNode = readJson(join(work, 'node_modules/@types/node/package.json')).version;
  Object.keys(TYPESCRIPT_LINES).forEach((line, i) => {
    const tsc = join(work, 'node_modules', `ts${i}`, 'bin', 'tsc');
    const version = run(process.execPath, [tsc, '--version'], work).trim();
    let output: string;
    try {
      output = run(process.execPath, [tsc, '-p', '.'], work);
    } catch (error) {
      const failure = error as { stdout?: string; stderr?: string };
      output = (failure.stdout ?? '') + (failure.stderr ?? '');
    }
    const diagnostics = output.split('\n').filter((text) => /error TS\d+/.test(text));
    const ours = diagnostics.filter(
      (text) => text.startsWith(`node_modules/${pkg.name}/`) || text.startsWith('index.ts'),
    );
    const theirs = diagnostics.length - ours.length;
    const label = `${line} (${version}, @types/node ${typesNode}, ${subpaths.length} subpaths)`;
    if (ours.length === 0) {
      passed += 1;
      console.log(`ok: ${label}${theirs ? `; ${theirs} errors in the peers' own declarations` : ''}`);
    } else {
      failed += 1;
      console.log(`FAILED: ${label}`);
      for (const text of ours) console.log(`  ${text}`);
    }
  });
} catch (error) {
  failed += 1;
  const failure = error as { message?: string; stderr?: string };
  console.log(`consumer types: could not run: ${failure.message}`);
  if (failure.stderr) console.log(failure.stderr.slice(-2000));
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(`consumer types: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
