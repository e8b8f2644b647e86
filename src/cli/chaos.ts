/**
 * `--chaos`: one fault every few seconds, taken in turn, so a newcomer watches the machines heal
 * (sessions expired, a stdio child killed, idle streams closed).
 */
import { describeError } from '../core/errors.js';

export interface Fault {
  /** Short name, e.g. `expire-sessions`. */
  name: string;
  /** Injects the fault; returns what happened, or undefined when it does not apply right now. */
  inject(): Promise<string | undefined> | string | undefined;
}

export interface ChaosRun {
  stop(): void;
}

/** Injects `faults` round-robin every `everyMs`, reporting each through `note`. */
export function startChaos(faults: readonly Fault[], everyMs: number, note: (text: string) => void): ChaosRun {
  let next = 0;
  let stopped = false;
  let busy = false;
  const tick = async () => {
    if (stopped || busy || faults.length === 0) return;
    busy = true;
    try {
      for (let tried = 0; tried < faults.length && !stopped; tried++) {
        const fault = faults[next]!;
        next = (next + 1) % faults.length;
        const what = await fault.inject();
        if (what !== undefined) {
          note(`chaos: ${what}`);
          return;
        }
      }
    } catch (error) {
      note(`chaos: fault failed: ${describeError(error)}`);
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void tick(), everyMs);
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
