/**
 * Fuzz settings shared by the suites in test/fuzz/ (fast-check through @fast-check/vitest).
 *
 * - Bounded by default: each property stops after FUZZ_TIME_MS (default 3 s) or its runs, so
 *   `npm test` and CI stay fast. A longer run: `FUZZ_RUNS=5000 npx vitest run test/fuzz`
 *   (no time limit then).
 * - Replayable: the seed is printed once per file; `FUZZ_SEED=<seed>` replays it. A failing
 *   property also prints its own seed and shrink path (fast-check's report).
 */
import fc from 'fast-check';
import {
  AuthorizationError,
  ConfigError,
  ConnectionClosedError,
  McpError,
  McpSupervisorError,
  OutcomeUnknownError,
  ProtocolError,
  QueueFullError,
  RequestAbortedError,
  RequestTimeoutError,
  SessionExpiredError,
  StreamEndedError,
  TransportError,
  UnsupportedProtocolVersionError,
} from '../../src/index.js';

const runs = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : undefined;
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;

/** Call once per file, before its properties. */
export function configureFuzz(file: string): void {
  fc.configureGlobal({
    seed,
    numRuns: runs ?? 200,
    // A long run (FUZZ_RUNS) runs them all; the default stops each property after a few seconds.
    interruptAfterTimeLimit: runs === undefined ? Number(process.env.FUZZ_TIME_MS ?? 3_000) : undefined,
    markInterruptAsFailure: false,
  });
  console.log(`fuzz ${file}: seed ${seed} (replay with FUZZ_SEED=${seed})${runs ? `, ${runs} runs` : ''}`);
}

/** Every class a caller may see, as documented in the README's error table. */
const DOCUMENTED = [
  McpError,
  TransportError,
  ProtocolError,
  SessionExpiredError,
  OutcomeUnknownError,
  ConnectionClosedError,
  RequestTimeoutError,
  RequestAbortedError,
  StreamEndedError,
  UnsupportedProtocolVersionError,
  QueueFullError,
  AuthorizationError,
  ConfigError,
] as const;

/** Every error the fuzz suites produced, by class name: each file asserts them all documented. */
export class ErrorLog {
  readonly seen = new Map<string, number>();

  /** Records `error`; throws (failing the property) when it is not a documented, typed error. */
  record(error: unknown): McpSupervisorError {
    if (!(error instanceof McpSupervisorError) || !DOCUMENTED.some((kind) => error instanceof kind)) {
      throw new Error(`an untyped error reached the caller: ${String(error)}`, { cause: error });
    }
    if (typeof error.code !== 'string' || typeof error.retryable !== 'boolean') {
      throw new Error(`a typed error without code or retryable: ${error.name}`, { cause: error });
    }
    this.seen.set(error.name, (this.seen.get(error.name) ?? 0) + 1);
    return error;
  }
}

/** Nothing may have been added to Object.prototype (a `__proto__` key parsed into an assignment). */
export function expectNoPollution(): void {
  const keys = Object.getOwnPropertyNames(Object.prototype);
  const polluted = (Object.prototype as Record<string, unknown>).polluted;
  if (polluted !== undefined || keys.includes('polluted')) throw new Error('Object.prototype was polluted');
}
