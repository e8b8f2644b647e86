/**
 * `npm run conformance [scenario | prefix/ …]`: the official conformance suite
 * (@modelcontextprotocol/conformance, pinned in package.json) against test/conformance/client.ts.
 * The runs come from the suite itself (scripts/conformance-plan.ts): both frozen requirement sets,
 * each at its own wire, plus every other client scenario at least once — one scenario at a time
 * (`--scenario X --spec-version W --force`, what the suite's parallel `--requirements` run does
 * per scenario). The suite needs Node >= 22: one is fetched from the npm registry once.
 * Prints a table and `conformance: N passed, M failed, K expected failures`; exits 1 on an
 * unexpected failure or a stale line in test/conformance/expected-failures.yaml.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { harnessPasses, judge, parseBaseline, summaryLine } from './conformance-baseline.js';
import { describeProblems, scoreRun, type Score } from './conformance-checks.js';
import {
  matchesFilter,
  parseRequirements,
  parseScenarioList,
  planRuns,
  REQUIREMENT_SETS,
  type PlannedRun,
} from './conformance-plan.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const suite = `${root}node_modules/@modelcontextprotocol/conformance/dist/index.js`;
const baselineFile = `${root}test/conformance/expected-failures.yaml`;
const outDir = `${root}.conformance`;
// The suite splits the command on spaces and appends the server URL.
const client = root.includes(' ')
  ? 'npm run -s conformance:client --'
  : `${root}node_modules/.bin/tsx ${root}test/conformance/client.ts`;
const filters = process.argv.slice(2);

/** A Node >= 22 for the suite, resolved once (the machine's own Node may be older). */
function node22(): string {
  const found = spawnSync('npm', ['exec', '--yes', '--package=node@22', '--', 'node', '-p', 'process.execPath'], {
    encoding: 'utf8',
  });
  const path = found.stdout.trim();
  if (found.status !== 0 || !path) throw new Error(`could not get Node 22 from the npm registry:\n${found.stderr}`);
  return path;
}

const node = node22();
const conformance = (args: string[], timeout = 60_000) =>
  spawnSync(node, [suite, ...args], { cwd: root, encoding: 'utf8', timeout });

function listed(args: string[]): string {
  const run = conformance(['list', ...args]);
  if (run.status !== 0) throw new Error(`conformance list ${args.join(' ')} failed:\n${run.stderr}`);
  return run.stdout;
}

const sets = REQUIREMENT_SETS.map((revision) =>
  parseRequirements(revision, listed(['--client', '--requirements', revision])),
);
const plan = planRuns(parseScenarioList(listed(['--client'])), sets).filter((run) =>
  matchesFilter(run.scenario, filters),
);
if (plan.length === 0)
  throw new Error(`no client scenario matches ${filters.join(' ')} (see \`conformance list --client\`)`);
const baseline = parseBaseline(readFileSync(baselineFile, 'utf8'), 'test/conformance/expected-failures.yaml');

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
const started = Date.now();
const results: Array<PlannedRun & Score & { outcome: Score['outcome'] }> = [];
for (const [index, planned] of plan.entries()) {
  const { scenario, wire } = planned;
  const dir = `${outDir}/${wire}/${scenario.replaceAll('/', '-')}`;
  const args = ['client', '--command', client, '--scenario', scenario, '--spec-version', wire, '--force', '-o', dir];
  const run = conformance(args, 180_000);
  const score = scoreRun(dir, run.status);
  results.push({ ...planned, ...score });
  const label = `${scenario} @${wire}`;
  console.log(
    `[${index + 1}/${plan.length}] ${score.outcome.toUpperCase()} ${label}${score.why ? ` (${score.why})` : ''}`,
  );
  for (const line of describeProblems(label, score.checks)) console.log(line);
  if (score.checks.length === 0)
    console.log(`${run.stdout ?? ''}${run.stderr ?? ''}`.trim().split('\n').slice(-15).join('\n'));
}

const judged = judge(results, baseline, filters.length === 0);
console.log('\n| scenario | wire | from | checks passed | failed | warnings | result |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const r of judged.runs) {
  const result =
    r.verdict === 'passed' ? 'PASS' : r.verdict === 'failed' ? `FAIL (${r.outcome})` : r.verdict.toUpperCase();
  console.log(`| ${r.scenario} | ${r.wire} | ${r.origin} | ${r.passed} | ${r.failed} | ${r.warnings} | ${result} |`);
}
for (const r of judged.runs.filter((x) => x.verdict === 'expected failure'))
  console.log(`expected failure: ${r.scenario}@${r.wire}: ${r.reason}`);
for (const r of judged.runs.filter((x) => x.verdict === 'stale baseline'))
  console.log(
    `stale baseline: ${r.scenario}@${r.wire} passes now; delete its line from test/conformance/expected-failures.yaml`,
  );
for (const e of judged.unmatched)
  console.log(`stale baseline: ${e.key} matches no run; delete its line from test/conformance/expected-failures.yaml`);
for (const r of judged.runs.filter((x) => x.verdict === 'failed'))
  console.log(`unexpected: ${r.scenario}@${r.wire} ${r.outcome} (${r.why ?? ''})`);
console.log(`\n${judged.runs.length} runs in ${Math.round((Date.now() - started) / 1000)} s`);
console.log(summaryLine(judged));
process.exit(harnessPasses(judged) ? 0 : 1);
