/**
 * What a server's answer can get wrong besides the wire format: a result that does not have the
 * shape of its method (InvalidResultError), and a tool's `structuredContent` that does not match
 * the `outputSchema` the tool declared (ToolOutputError). Both are ProtocolErrors
 * (code 'PROTOCOL_ERROR', not retryable: the same server would answer the same way).
 */
import { ProtocolError, type ErrorDetails } from '../core/errors.js';

export interface ResultIssue {
  /** Where in the result: `resources[2].uri`, `structuredContent.temperature`, `(root)`. */
  path: string;
  message: string;
}

function describe(issues: readonly ResultIssue[]): string {
  const shown = issues.slice(0, 3).map((issue) => `${issue.path}: ${issue.message}`);
  const more = issues.length > 3 ? ` (and ${issues.length - 3} more)` : '';
  return shown.join('; ') + more;
}

/** The result of `method` does not have the shape the protocol gives it. */
export class InvalidResultError extends ProtocolError {
  /** The first bad field, e.g. `resources[2].uri`. */
  readonly path: string;
  constructor(
    readonly method: string,
    readonly issues: readonly ResultIssue[],
    details?: ErrorDetails,
  ) {
    super(`invalid ${method} result: ${describe(issues)}`, details);
    this.path = issues[0]?.path ?? '(root)';
  }
}

/** A tool answered with `structuredContent` that breaks its declared `outputSchema` (or left it out). */
export class ToolOutputError extends ProtocolError {
  /** The first bad field, e.g. `structuredContent.temperature`. */
  readonly path: string;
  constructor(
    readonly tool: string,
    readonly issues: readonly ResultIssue[],
    details?: ErrorDetails,
  ) {
    super(`tool '${tool}' answered outside its outputSchema: ${describe(issues)}`, details);
    this.path = issues[0]?.path ?? 'structuredContent';
  }
}
