/**
 * The errors of answering a server's requests for input (multi round-trip requests, spec
 * 2026-07-28, and the tasks extension's `inputRequests`): too many rounds, or input the client
 * could not give.
 */
import { McpSupervisorError, type ErrorDetails } from '../../core/errors.js';

/**
 * A modern server (spec 2026-07-28, multi round-trip requests) still asked for input after
 * `maxRounds` retries of the same request. `inputRequests` is what it asked for last.
 */
export class InputRoundsExceededError extends McpSupervisorError {
  readonly code = 'INPUT_ROUNDS_EXCEEDED' as const;
  readonly retryable = false;
  constructor(
    readonly method: string,
    readonly maxRounds: number,
    readonly inputRequests: Readonly<Record<string, unknown>> | undefined,
    details?: ErrorDetails,
  ) {
    super(`'${method}' still required input after ${maxRounds} rounds (maxInputRounds)`, details);
  }
}

/**
 * A modern server asked for input (an `InputRequiredResult`) the client could not give: no
 * handler for that kind of request, or the handler threw (its error is the `cause`).
 */
export class InputRequestError extends McpSupervisorError {
  readonly code = 'INPUT_REQUEST_FAILED' as const;
  readonly retryable = false;
  constructor(
    readonly method: string,
    /** The server's key for the embedded request, and its method (`elicitation/create`, …). */
    readonly inputKey: string,
    readonly inputMethod: string,
    reason: string,
    details?: ErrorDetails,
  ) {
    super(`'${method}' needs input '${inputKey}' (${inputMethod}): ${reason}`, details);
  }
}
