/**
 * `--chaos`'s steady traffic: tool calls kept running against a demo server while faults hit it,
 * so the screen shows what a caller sees — calls answered, and lost (expected 0).
 */
import type { ServerHandle } from '../handle/server-handle.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import { describeError } from '../core/errors.js';

export interface WorkloadRun {
  stop(): void;
}

export interface WorkloadOptions {
  /** Calls in flight at once. */
  concurrency: number;
  /** Each caller's pause between its calls: the demo's traffic is a steady trickle, not a benchmark. */
  pauseMs: number;
  /** How often the counts are shown. */
  reportEveryMs: number;
}

/** Keeps `concurrency` callers busy with `call` on `server`; reports answered and lost calls through `note`. */
export function startWorkload(
  sup: Supervisor,
  server: string,
  call: (handle: ServerHandle, n: number) => Promise<unknown>,
  note: (text: string) => void,
  options: WorkloadOptions = { concurrency: 2, pauseMs: 100, reportEveryMs: 5_000 },
): WorkloadRun {
  const handle = sup.server(server);
  let stopped = false;
  let issued = 0;
  let answered = 0;
  let lost = 0;
  let lastError: string | undefined;
  const loop = async () => {
    while (!stopped) {
      try {
        await call(handle, ++issued);
        answered++;
      } catch (error) {
        if (stopped) return;
        lost++;
        lastError = describeError(error);
      }
      await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
    }
  };
  for (let i = 0; i < options.concurrency; i++) void loop();
  const report = () =>
    note(
      `workload on ${server}: ${answered} calls answered, ${lost} lost${lost > 0 && lastError ? ` (last: ${lastError})` : ''}`,
    );
  const timer = setInterval(report, options.reportEveryMs);
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      report();
    },
  };
}
