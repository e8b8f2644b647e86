/**
 * The known-failures baseline (test/conformance/expected-failures.yaml): one `scenario@wire: reason`
 * per line (a YAML map; `scenario: reason` covers every wire). A listed run that fails or does not
 * run is an expected failure; a listed run that passes is a stale entry, and fails the harness
 * like an unexpected failure does, so the line gets deleted as soon as the fix lands.
 */
import type { Outcome } from './conformance-checks.js';

export interface BaselineEntry {
  key: string;
  scenario: string;
  /** Undefined: every wire. */
  wire?: string;
  reason: string;
}

export interface RunOutcome {
  scenario: string;
  wire: string;
  outcome: Outcome;
}

export type Verdict = 'passed' | 'failed' | 'expected failure' | 'stale baseline';

export interface Judged<R extends RunOutcome> {
  runs: Array<R & { verdict: Verdict; reason?: string }>;
  /** Entries that matched no run at all (only reported when every run was made). */
  unmatched: BaselineEntry[];
}

/** Parses the baseline; a line that is neither a comment nor `key: reason` is an error naming it. */
export function parseBaseline(text: string, file = 'expected-failures.yaml'): BaselineEntry[] {
  const entries: BaselineEntry[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const match = /^([^\s:@#]+)(?:@(\d{4}-\d{2}-\d{2}))?:\s+(\S.*)$/.exec(line);
    if (!match)
      throw new Error(`${file}:${index + 1}: expected "scenario@wire: reason" or "scenario: reason", got ${raw}`);
    const [, scenario, wire, reason] = match as unknown as [string, string, string | undefined, string];
    const key = wire === undefined ? scenario : `${scenario}@${wire}`;
    if (entries.some((e) => e.key === key)) throw new Error(`${file}:${index + 1}: ${key} is listed twice`);
    entries.push({ key, scenario, wire, reason });
  });
  return entries;
}

/** Each run's verdict against the baseline. `complete`: every planned run was made (no filter). */
export function judge<R extends RunOutcome>(
  runs: readonly R[],
  baseline: readonly BaselineEntry[],
  complete: boolean,
): Judged<R> {
  const used = new Set<BaselineEntry>();
  const judged = runs.map((run) => {
    const entry =
      baseline.find((e) => e.scenario === run.scenario && e.wire === run.wire) ??
      baseline.find((e) => e.scenario === run.scenario && e.wire === undefined);
    if (entry) used.add(entry);
    const verdict: Verdict =
      run.outcome === 'passed' ? (entry ? 'stale baseline' : 'passed') : entry ? 'expected failure' : 'failed';
    return { ...run, verdict, ...(entry ? { reason: entry.reason } : {}) };
  });
  return { runs: judged, unmatched: complete ? baseline.filter((e) => !used.has(e)) : [] };
}

/** The last line `.ci/run` parses: stale entries and unmatched lines count as failures. */
export function summaryLine(judged: Judged<RunOutcome>): string {
  const count = (verdict: Verdict) => judged.runs.filter((r) => r.verdict === verdict).length;
  const failed = count('failed') + count('stale baseline') + judged.unmatched.length;
  return `conformance: ${count('passed')} passed, ${failed} failed, ${count('expected failure')} expected failures`;
}

export function harnessPasses(judged: Judged<RunOutcome>): boolean {
  return (
    judged.unmatched.length === 0 &&
    judged.runs.every((r) => r.verdict === 'passed' || r.verdict === 'expected failure')
  );
}
