/** An auth provider whose every authorization waits for the script (the `authorizing` state's effect). */
import type { AuthChallenge, AuthProvider } from '../../../src/auth/types.js';
import { deferred, type Deferred } from './scripted-transport.js';

export class ScriptedAuth implements AuthProvider {
  generation = 0;
  pending: Deferred<void> | undefined;

  authorization(): string | undefined {
    return this.generation > 0 ? `Bearer scripted-${this.generation}` : undefined;
  }

  async authorize(_challenge: AuthChallenge, _signal: AbortSignal): Promise<void> {
    const pending = deferred<void>();
    this.pending = pending;
    await pending.promise;
    this.generation += 1;
  }
}
