/**
 * Which scenario runs the harness makes, read from the suite itself: `list --client` (every client
 * scenario, with the spec versions it applies to or `extension`) and `list --requirements <rev>`
 * (the frozen set: the client scenarios a revision requires, plus those it runs but never scores —
 * exactly what the suite's own `--requirements` run picks). Nothing is kept by hand.
 */

/** The two frozen requirement sets of suite 0.2.0-alpha.12: each runs at its own wire. */
export const REQUIREMENT_SETS = ['2025-11-25', '2026-07-28'] as const;

export interface Listed {
  name: string;
  /** Spec versions (`2025-11-25`, …) or `extension`. */
  tags: string[];
}

export interface RequirementSet {
  revision: string;
  required: string[];
  /** Run and reported, never scored by the suite: scenario → reason (`extension`, `added-after-release`, `pending`). */
  notScored: Map<string, string>;
}

export interface PlannedRun {
  scenario: string;
  /** The spec version the scenario's server speaks (`--spec-version`). */
  wire: string;
  /** Where the run comes from: `required 2026-07-28`, `extension 2025-11-25`, or `listed` (in no set). */
  origin: string;
}

/** `list --client`: lines like `  - auth/dpop [extension]`. */
export function parseScenarioList(text: string): Listed[] {
  const listed: Listed[] = [];
  for (const line of text.split('\n')) {
    const match = /^\s+- (\S+) \[([^\]]+)\]\s*$/.exec(line);
    if (match) listed.push({ name: match[1]!, tags: match[2]!.split(',').map((t) => t.trim()) });
  }
  if (listed.length === 0) throw new Error(`\`conformance list --client\` listed no scenario:\n${text}`);
  return listed;
}

/** `list --client --requirements <rev>`: the client section and the `[client]` entries never scored. */
export function parseRequirements(revision: string, text: string): RequirementSet {
  const required: string[] = [];
  const notScored = new Map<string, string>();
  let section: 'client' | 'not scored' | undefined;
  let reason = '';
  for (const line of text.split('\n')) {
    if (/^Client scenarios/.test(line)) section = 'client';
    else if (/^Run and reported, but never scored/.test(line)) section = 'not scored';
    else if (/^\S/.test(line)) section = undefined;
    else if (section === 'client') {
      const match = /^\s+- (\S+)\s*$/.exec(line);
      if (match) required.push(match[1]!);
    } else if (section === 'not scored') {
      const heading = /^ {2}(\S+) \(\d+\):/.exec(line);
      if (heading) reason = heading[1]!;
      const entry = /^\s+- (\S+) \[client\]/.exec(line);
      if (entry) notScored.set(entry[1]!, reason);
    }
  }
  if (required.length === 0) throw new Error(`the ${revision} requirement set lists no client scenario:\n${text}`);
  return { revision, required, notScored };
}

/**
 * Every run, one scenario at a time: each set's scenarios (required and not scored) at the set's
 * wire; then every listed scenario in no set, at each spec version it names (an extension at
 * both sets' wires), so each client scenario of the suite runs at least once.
 */
export function planRuns(listed: readonly Listed[], sets: readonly RequirementSet[]): PlannedRun[] {
  const runs: PlannedRun[] = [];
  const inSomeSet = new Set<string>();
  for (const set of sets) {
    for (const scenario of set.required)
      runs.push({ scenario, wire: set.revision, origin: `required ${set.revision}` });
    for (const [scenario, reason] of set.notScored)
      runs.push({ scenario, wire: set.revision, origin: `${reason} ${set.revision}` });
    for (const scenario of [...set.required, ...set.notScored.keys()]) inSomeSet.add(scenario);
  }
  for (const { name, tags } of listed) {
    if (inSomeSet.has(name)) continue;
    const wires = tags.includes('extension') ? [...REQUIREMENT_SETS] : tags;
    for (const wire of wires)
      runs.push({ scenario: name, wire, origin: tags.includes('extension') ? 'extension' : 'listed' });
  }
  return runs;
}

/** `auth/` (a prefix, ends with `/`) or an exact scenario name; no filter keeps every run. */
export function matchesFilter(scenario: string, filters: readonly string[]): boolean {
  if (filters.length === 0) return true;
  return filters.some((f) => (f.endsWith('/') ? scenario.startsWith(f) : scenario === f));
}
