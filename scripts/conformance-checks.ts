/** What both conformance harnesses read from one scenario run: its checks.json, scored. */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Check {
  id: string;
  status: string;
  description?: string;
  errorMessage?: string;
}

export interface Score {
  checks: Check[];
  passed: number;
  failed: number;
  warnings: number;
  /** The run exited 0, wrote checks, and none failed or warned. */
  ok: boolean;
}

/** Scores the run whose output folder is `dir`; with no checks.json, echoes the run's output. */
export function scoreRun(dir: string, run: SpawnSyncReturns<string>): Score {
  let checks: Check[] = [];
  try {
    checks = JSON.parse(readFileSync(findChecks(dir), 'utf8')) as Check[];
  } catch {
    process.stdout.write(run.stdout ?? '');
    process.stderr.write(run.stderr ?? '');
  }
  const failed = checks.filter((c) => c.status === 'FAILURE').length;
  const warnings = checks.filter((c) => c.status === 'WARNING').length;
  const passed = checks.filter((c) => c.status === 'SUCCESS').length;
  const ok = run.status === 0 && checks.length > 0 && failed === 0 && warnings === 0;
  return { checks, passed, failed, warnings, ok };
}

/** The checks that failed or warned, one line each. */
export function describeProblems(label: string, checks: readonly Check[]): string[] {
  return checks
    .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
    .map((check) => `  ${label}: ${check.status} ${check.id}: ${check.errorMessage ?? check.description ?? ''}`);
}

/** The suite writes checks.json into a per-run folder below `-o`. */
function findChecks(dir: string): string {
  const found = spawnSync('find', [dir, '-name', 'checks.json'], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  if (!found) throw new Error(`no checks.json under ${dir}`);
  return found;
}
