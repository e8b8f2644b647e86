/**
 * `npm run conformance:auth [scenario…]`: runs the `auth/*` client scenarios of the official
 * conformance suite, pinned to 0.2.0-alpha.12, one at a time, at both wires (spec versions
 * 2025-11-25 and 2026-07-28; `--force` where the suite would skip), against test/conformance/client.ts. The suite is installed into a temp
 * directory (not package.json: the main harness keeps its own version) and runs under Node 22
 * fetched with `npm exec --package=node@22`. Prints a table; exits 1 unless every run passed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeProblems, scoreRun } from './conformance-checks.js';

const SUITE_VERSION = '0.2.0-alpha.12';
const WIRES = ['2025-11-25', '2026-07-28'] as const;
const root = fileURLToPath(new URL('..', import.meta.url));
const suiteDir = process.env.CONFORMANCE_AUTH_DIR ?? join(tmpdir(), `mcp-conformance-${SUITE_VERSION}`);
const suite = join(suiteDir, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const outDir = `${root}.conformance-auth`;
const client = `npm --prefix ${root} run -s conformance:client --`;

function node22(args: string[], timeout = 180_000) {
  return spawnSync('npm', ['exec', '--yes', '--package=node@22', '--', 'node', suite, ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout,
  });
}

if (!existsSync(suite)) {
  mkdirSync(suiteDir, { recursive: true });
  writeFileSync(join(suiteDir, 'package.json'), '{"name":"conformance-auth-suite","private":true}\n');
  const install = spawnSync(
    'npm',
    ['install', '--no-audit', '--no-fund', '--save-exact', `@modelcontextprotocol/conformance@${SUITE_VERSION}`],
    { cwd: suiteDir, encoding: 'utf8' },
  );
  if (install.status !== 0) throw new Error(`installing the suite failed:\n${install.stderr}`);
}

/** `conformance list`: each auth scenario with the spec versions (or `extension`) it belongs to. */
const listed = node22(['list']).stdout.split('\n');
const scenarios = listed
  .map((line) => /^\s+- (auth\/\S+) \[([^\]]+)\]/.exec(line))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => ({ name: m[1]!, versions: m[2]!.split(',') }));
const only = process.argv.slice(2);

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
const rows: Array<{ scenario: string; wire: string; passed: number; failed: number; warnings: number; ok: boolean }> =
  [];
for (const { name, versions } of scenarios.filter((s) => only.length === 0 || only.includes(s.name))) {
  // Every scenario at both wires: extensions are not on the timeline, and a 2026-07-28 scenario
  // forced onto the 2025-11-25 wire checks its authorization rules on a wire the client speaks.
  for (const wire of WIRES) {
    const dir = `${outDir}/${name.replace('/', '-')}-${wire}`;
    const args = ['client', '--command', client, '--scenario', name, '--spec-version', wire, '-o', dir];
    const run = node22(versions.includes(wire) ? args : [...args, '--force']);
    const { checks, passed, failed, warnings, ok } = scoreRun(dir, run);
    rows.push({ scenario: name, wire, passed, failed, warnings, ok });
    for (const line of describeProblems(`${name} @${wire}`, checks)) console.log(line);
    console.log(`${ok ? 'PASS' : 'FAIL'} ${name} @${wire}`);
  }
}

console.log(
  `\n| scenario | wire | checks passed | failed | warnings | result |\n| --- | --- | --- | --- | --- | --- |`,
);
for (const r of rows)
  console.log(`| ${r.scenario} | ${r.wire} | ${r.passed} | ${r.failed} | ${r.warnings} | ${r.ok ? 'PASS' : 'FAIL'} |`);
const failures = rows.filter((r) => !r.ok).length;
console.log(`\nconformance auth (${SUITE_VERSION}): ${rows.length - failures} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
