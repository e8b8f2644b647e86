/** Reading zod's issues for a config error. */
import type { z } from 'zod';

/**
 * A union that failed (`keepalive: false | {…}`) names the field of the one branch the value was
 * meant for (its issues are all inside it), not just "Invalid input" at the union.
 */
export function leafIssues(issues: readonly z.core.$ZodIssue[]): Array<{ path: PropertyKey[]; message: string }> {
  return issues.flatMap((issue) => {
    const meant =
      issue.code === 'invalid_union' ? issue.errors.filter((branch) => branch.every((i) => i.path.length > 0)) : [];
    if (meant.length !== 1) return [{ path: issue.path, message: issue.message }];
    return leafIssues(meant[0]!).map((leaf) => ({ path: [...issue.path, ...leaf.path], message: leaf.message }));
  });
}
