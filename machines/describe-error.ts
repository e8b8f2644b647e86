/** An error in one line, for a failure, a cause or a status (the runtime's `describeError` is this one). */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
