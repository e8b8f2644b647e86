/** One scenario run of the conformance suite, scored from the checks.json it wrote. */
import { readdirSync, readFileSync, type Dirent } from 'node:fs';
import { join } from 'node:path';

export interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

/** `not run`: no check reached a verdict (every one SKIPPED or INFO) — never a pass. */
export type Outcome = 'passed' | 'failed' | 'not run';

export interface Score {
  checks: Check[];
  passed: number;
  failed: number;
  warnings: number;
  outcome: Outcome;
  /** Why the outcome is not `passed`, in a few words. */
  why?: string;
}

/**
 * Scores one run. `exitStatus` is the suite's own exit status for the scenario: non-zero when a
 * check failed or warned, the client timed out, or the client exited with an error the scenario
 * does not allow. `checks` is undefined when the run wrote no checks.json.
 */
export function scoreChecks(checks: Check[] | undefined, exitStatus: number | null): Score {
  const list = checks ?? [];
  const count = (status: string) => list.filter((c) => c.status === status).length;
  const score = { checks: list, passed: count('SUCCESS'), failed: count('FAILURE'), warnings: count('WARNING') };
  if (checks === undefined) return { ...score, outcome: 'failed', why: 'the run wrote no checks.json' };
  if (score.failed > 0 || score.warnings > 0)
    return { ...score, outcome: 'failed', why: `${score.failed} failed, ${score.warnings} warned` };
  if (score.passed === 0)
    return { ...score, outcome: 'not run', why: `no check reached a verdict (${list.length} SKIPPED or INFO)` };
  if (exitStatus !== 0)
    return { ...score, outcome: 'failed', why: `the suite exited ${exitStatus} (client error or timeout)` };
  return { ...score, outcome: 'passed' };
}

/** Scores the run whose output folder is `dir` (checks.json somewhere below it). */
export function scoreRun(dir: string, exitStatus: number | null): Score {
  return scoreChecks(readChecks(dir), exitStatus);
}

/** The checks that failed or warned, one line each. */
export function describeProblems(label: string, checks: readonly Check[]): string[] {
  return checks
    .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
    .map((check) => `  ${label}: ${check.status} ${check.id}: ${check.errorMessage ?? check.description ?? ''}`);
}

/** The suite writes `<dir>/<scenario>-<time>/checks.json`; `auth/x` makes that two levels deep. */
function readChecks(dir: string): Check[] | undefined {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return undefined;
  }
  if (entries.some((e) => e.isFile() && e.name === 'checks.json'))
    return JSON.parse(readFileSync(join(dir, 'checks.json'), 'utf8')) as Check[];
  for (const entry of entries.filter((e) => e.isDirectory())) {
    const found = readChecks(join(dir, entry.name));
    if (found) return found;
  }
  return undefined;
}
