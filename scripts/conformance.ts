/**
 * `npm run conformance [scenario…]`: runs the official conformance suite's client scenarios (all
 * of them by default) against test/conformance/client.ts. The suite needs Node >= 22, so it runs under a Node
 * fetched from the npm registry (`npm exec --package=node@22`), leaving the machine's Node alone.
 * Prints a table; exits 1 unless every scenario passed with no failure and no warning.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describeProblems, scoreRun } from './conformance-checks.js';

/** Every client scenario of suite 0.1.16 (`conformance list`): core, auth, drafts and extensions. */
const SCENARIOS = [
  'initialize',
  'tools_call',
  'elicitation-sep1034-client-defaults',
  'sse-retry',
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/client-credentials-jwt',
  'auth/client-credentials-basic',
  'auth/cross-app-access-complete-flow',
];
const only = process.argv.slice(2);
const root = fileURLToPath(new URL('..', import.meta.url));
const suite = `${root}node_modules/@modelcontextprotocol/conformance/dist/index.js`;
// The documented entry point: the suite appends the server URL.
const client = 'npm run -s conformance:client --';
const outDir = `${root}.conformance`;

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
const rows: Array<{ scenario: string; passed: number; failed: number; warnings: number; ok: boolean }> = [];
for (const scenario of only.length > 0 ? SCENARIOS.filter((name) => only.includes(name)) : SCENARIOS) {
  const dir = `${outDir}/${scenario.replace('/', '-')}`;
  const run = spawnSync(
    'npm',
    [
      'exec',
      '--yes',
      '--package=node@22',
      '--',
      'node',
      suite,
      'client',
      '--command',
      client,
      '--scenario',
      scenario,
      '-o',
      dir,
    ],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 120_000,
    },
  );
  const { checks, passed, failed, warnings, ok } = scoreRun(dir, run);
  rows.push({ scenario, passed, failed, warnings, ok });
  for (const line of describeProblems(scenario, checks)) console.log(line);
}

console.log('\n| scenario | checks passed | failed | warnings | result |\n| --- | --- | --- | --- | --- |');
for (const row of rows)
  console.log(`| ${row.scenario} | ${row.passed} | ${row.failed} | ${row.warnings} | ${row.ok ? 'PASS' : 'FAIL'} |`);
const failures = rows.filter((r) => !r.ok).length;
console.log(`\nconformance: ${rows.length - failures} passed, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
