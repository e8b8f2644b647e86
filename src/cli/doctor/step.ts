/** One checked step of `doctor`: what was checked, how it went, and — when it failed — what to do. */

export type StepOutcome = 'ok' | 'fail' | 'warn' | 'skip';

export interface Step {
  name: string;
  outcome: StepOutcome;
  /** What was seen: an address, a status line, a count. */
  detail: string;
  /** What to do about it (failed and warned steps). */
  fix?: string | undefined;
}

export const ok = (name: string, detail: string): Step => ({ name, outcome: 'ok', detail });
export const fail = (name: string, detail: string, fix: string): Step => ({ name, outcome: 'fail', detail, fix });
export const warn = (name: string, detail: string, fix: string): Step => ({ name, outcome: 'warn', detail, fix });
export const skip = (name: string, detail: string): Step => ({ name, outcome: 'skip', detail });

const MARK: Record<StepOutcome, string> = { ok: '✓', fail: '✗', warn: '!', skip: '-' };
const NAME_WIDTH = 14;

/** `  ✓ DNS           127.0.0.1`, and under a failed step `    → what to do`. */
export function formatStep(step: Step): string[] {
  const lines = [`  ${MARK[step.outcome]} ${step.name.padEnd(NAME_WIDTH)}${step.detail}`];
  if (step.fix && step.outcome !== 'ok') lines.push(`    → ${step.fix}`);
  return lines;
}

/** The error's code and message in one line (`ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9`). */
export function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Milliseconds since `start`, for a detail. */
export function since(start: number): string {
  return `${Math.round(performance.now() - start)} ms`;
}
