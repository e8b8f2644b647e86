/**
 * The conformance harness's own logic (scripts/conformance-*.ts), without running the suite:
 * scoring (a run whose checks were all SKIPPED is not run, never passed), the plan read from
 * the suite's `list` output, and the expected-failures baseline (stale and unexpected entries).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { harnessPasses, judge, parseBaseline, summaryLine } from '../../scripts/conformance-baseline.js';
import { scoreChecks, scoreRun, type Check } from '../../scripts/conformance-checks.js';
import { matchesFilter, parseRequirements, parseScenarioList, planRuns } from '../../scripts/conformance-plan.js';

const check = (status: string, id = `c-${status}`): Check => ({ id, status });

describe('scoring one run', () => {
  it('checks that were all SKIPPED (or INFO) count as not run, never as passed, even when the suite exited 0', () => {
    expect(scoreChecks([check('SKIPPED'), check('SKIPPED')], 0)).toMatchObject({ outcome: 'not run', passed: 0 });
    expect(scoreChecks([check('SKIPPED'), check('INFO')], 0).outcome).toBe('not run');
    expect(scoreChecks([], 0).outcome).toBe('not run');
  });

  it('a SUCCESS with SKIPPED ones beside it passes; a FAILURE or a WARNING fails', () => {
    expect(scoreChecks([check('SUCCESS'), check('SKIPPED')], 0)).toMatchObject({ outcome: 'passed', passed: 1 });
    expect(scoreChecks([check('SUCCESS'), check('WARNING')], 1)).toMatchObject({ outcome: 'failed', warnings: 1 });
    expect(scoreChecks([check('SUCCESS'), check('FAILURE')], 1)).toMatchObject({ outcome: 'failed', failed: 1 });
  });

  it('a suite that exited non-zero (client error, timeout) fails even with only SUCCESS checks; no checks.json fails', () => {
    expect(scoreChecks([check('SUCCESS')], 1)).toMatchObject({ outcome: 'failed', why: /exited 1/ });
    expect(scoreChecks(undefined, 0)).toMatchObject({ outcome: 'failed', why: /no checks.json/ });
  });

  describe('reading checks.json from the run folder', () => {
    let dir: string | undefined;
    afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

    it('finds it below the output folder, as deep as the suite writes it', () => {
      dir = mkdtempSync(join(tmpdir(), 'conformance-score-'));
      mkdirSync(join(dir, 'tools_call-2026-11-23T12-00-00-000Z'));
      writeFileSync(
        join(dir, 'tools_call-2026-11-23T12-00-00-000Z', 'checks.json'),
        JSON.stringify([check('SUCCESS')]),
      );
      expect(scoreRun(dir, 0).outcome).toBe('passed');
      // `auth/scope-step-up` becomes `auth/scope-step-up-<time>/`: one folder deeper.
      mkdirSync(join(dir, 'deeper', 'auth', 'scope-step-up-2026-11-23T12-00-00-000Z'), { recursive: true });
      writeFileSync(
        join(dir, 'deeper', 'auth', 'scope-step-up-2026-11-23T12-00-00-000Z', 'checks.json'),
        JSON.stringify([check('SKIPPED')]),
      );
      expect(scoreRun(join(dir, 'deeper'), 0).outcome).toBe('not run');
      expect(scoreRun(join(dir, 'missing'), 0).outcome).toBe('failed');
    });
  });
});

const LIST = `Client scenarios (test against a client):
  - initialize [2025-06-18,2025-11-25]
  - tools_call [2025-06-18,2025-11-25,2026-07-28]
  - auth/2025-03-26-oauth-endpoint-fallback [2025-03-26]
  - auth/dpop [extension]
  - sep-2640-client-no-prefetch [extension]
`;
const REQUIRED_2026 = `Required for 2026-07-28 (3 scenarios, frozen; run at the 2026-07-28 wire):

Server scenarios (test against a server):
  - server-stateless

Client scenarios (test against a client):
  - tools_call

Run and reported, but never scored:
  extension (2):
    - auth/dpop [client]
    - tasks-lifecycle [server]
  added-after-release (1):
    - json-schema-2020-12-preservation [client]
`;
const REQUIRED_2025 = `Client scenarios (test against a client):
  - initialize
  - tools_call
`;

describe('the plan, read from the suite', () => {
  const sets = [parseRequirements('2025-11-25', REQUIRED_2025), parseRequirements('2026-07-28', REQUIRED_2026)];

  it('a requirement set is its client scenarios plus the client ones it runs without scoring', () => {
    expect(sets[1]).toEqual({
      revision: '2026-07-28',
      required: ['tools_call'],
      notScored: new Map([
        ['auth/dpop', 'extension'],
        ['json-schema-2020-12-preservation', 'added-after-release'],
      ]),
    });
  });

  it('each set at its own wire, then every scenario in no set at its own versions (extensions at both wires)', () => {
    const runs = planRuns(parseScenarioList(LIST), sets).map((r) => `${r.scenario}@${r.wire} (${r.origin})`);
    expect(runs).toEqual([
      'initialize@2025-11-25 (required 2025-11-25)',
      'tools_call@2025-11-25 (required 2025-11-25)',
      'tools_call@2026-07-28 (required 2026-07-28)',
      'auth/dpop@2026-07-28 (extension 2026-07-28)',
      'json-schema-2020-12-preservation@2026-07-28 (added-after-release 2026-07-28)',
      'auth/2025-03-26-oauth-endpoint-fallback@2025-03-26 (listed)',
      'sep-2640-client-no-prefetch@2025-11-25 (extension)',
      'sep-2640-client-no-prefetch@2026-07-28 (extension)',
    ]);
  });

  it('an empty list is an error, not an empty (passing) run; filters take names and prefixes', () => {
    expect(() => parseScenarioList('nothing here')).toThrow(/listed no scenario/);
    expect(() => parseRequirements('2026-07-28', 'Client scenarios (test against a client):\n')).toThrow(/no client/);
    expect(matchesFilter('auth/dpop', ['auth/'])).toBe(true);
    expect(matchesFilter('auth/dpop', ['auth'])).toBe(false);
    expect(matchesFilter('tools_call', [])).toBe(true);
  });
});

describe('the expected-failures baseline', () => {
  const baseline = parseBaseline(
    [
      '# comment',
      'auth/dpop: DPoP is not implemented yet',
      'http-custom-headers@2026-07-28: headers branch',
      'gone-scenario@2026-07-28: renamed away',
    ].join('\n'),
  );

  it('reads `scenario@wire: reason` and `scenario: reason`; a malformed or repeated line is an error naming the line', () => {
    expect(baseline[0]).toEqual({ key: 'auth/dpop', scenario: 'auth/dpop', reason: 'DPoP is not implemented yet' });
    expect(baseline[1]).toMatchObject({ scenario: 'http-custom-headers', wire: '2026-07-28' });
    expect(() => parseBaseline('ok: fine\nno reason here')).toThrow(/:2: expected/);
    expect(() => parseBaseline('a: one\na: two')).toThrow(/:2: a is listed twice/);
  });

  const runs = [
    { scenario: 'tools_call', wire: '2026-07-28', outcome: 'passed' as const },
    { scenario: 'auth/dpop', wire: '2025-11-25', outcome: 'failed' as const },
    { scenario: 'auth/dpop', wire: '2026-07-28', outcome: 'not run' as const },
    { scenario: 'http-custom-headers', wire: '2026-07-28', outcome: 'passed' as const },
    { scenario: 'sep-2322-client-request-state', wire: '2026-07-28', outcome: 'not run' as const },
  ];

  it('listed failures are expected; a listed run that passes is stale; an unlisted failure or not-run is unexpected', () => {
    const judged = judge(runs, baseline, false);
    expect(judged.runs.map((r) => r.verdict)).toEqual([
      'passed',
      'expected failure',
      'expected failure',
      'stale baseline',
      'failed',
    ]);
    expect(judged.unmatched).toEqual([]);
    expect(harnessPasses(judged)).toBe(false);
    expect(summaryLine(judged)).toBe('conformance: 1 passed, 2 failed, 2 expected failures');
  });

  it('only expected failures: the harness passes, and the line .ci/run parses counts them apart', () => {
    const judged = judge(runs.slice(0, 3), baseline.slice(0, 1), true);
    expect(harnessPasses(judged)).toBe(true);
    const line = summaryLine(judged);
    expect(line).toBe('conformance: 1 passed, 0 failed, 2 expected failures');
    expect(line).toMatch(/^conformance: [0-9]+ passed, [0-9]+ failed/);
  });

  it('on a complete run, a line that matches no run is stale too', () => {
    const judged = judge(runs.slice(0, 3), baseline, true);
    expect(judged.unmatched.map((e) => e.key)).toEqual(['http-custom-headers@2026-07-28', 'gone-scenario@2026-07-28']);
    expect(harnessPasses(judged)).toBe(false);
    expect(summaryLine(judged)).toBe('conformance: 1 passed, 2 failed, 2 expected failures');
  });
});
