/**
 * What a session's opening keeps in the supervisor's store (runtime/stored/stored-state.ts):
 *
 * - the era verdict: read when a connection opens with no era latched (era `auto`), written
 *   when a discovery or a handshake proves it (not again while the stored one is fresh). A known
 *   2025-era server is initialized at once; a handshake refused in that era drops the verdict and
 *   the next attempt probes the era again.
 * - `resumeSession` (2025-era Streamable HTTP): the session the last handshake opened, taken up
 *   again by the first opening of this process and checked with one `ping`; a 404 or 400 drops it
 *   and the handshake follows.
 */
import type { Era, SessionInfo } from '../../../machines/connection.machine.js';
import {
  AuthorizationRequiredError,
  ConnectionClosedError,
  describeError,
  McpSupervisorError,
  ProtocolError,
  RequestTimeoutError,
  SessionExpiredError,
  TransportError,
} from '../../core/errors.js';
import { probeTimeoutMs } from '../../protocol/deadlines.js';
import { isSupportedProtocolVersion } from '../../protocol/messages.js';
import type { Transport } from '../../transports/transport.js';
import type { ReadOnlyContext } from '../context/server-context.js';
import type { Probes } from '../probes/probes.js';
import type { StoredState } from '../stored/stored-state.js';

/** A verdict younger than this is not written again (nor half its maximum age). */
const REWRITE_AFTER_MS = 60_000;

export class EraMemory {
  /** The verdict the store gave, or the last one written. */
  private known: { era: Era; learnedAt: number } | undefined = undefined;
  /** The connection being opened took its era from the store: a refused handshake drops the verdict. */
  private fromStore = false;
  /** The stored session was taken up, or found gone, in this process: later sessions are new ones. */
  private resumeTried = false;

  constructor(
    private readonly context: ReadOnlyContext,
    private readonly stored: StoredState,
    private readonly probes: Probes,
    /** The era is `auto` (not pinned): a stored verdict may decide it. */
    private readonly auto: boolean,
  ) {}

  /** The stored era, when the machine has none latched and the verdict is fresh. */
  async storedEra(): Promise<Era | undefined> {
    this.fromStore = false;
    if (!this.auto || this.context.snapshot()?.context.latchedEra !== undefined) return undefined;
    const verdict = await this.stored.era(this.context.config.eraVerdictMaxAgeMs);
    if (!verdict) return undefined;
    this.known = verdict;
    this.fromStore = verdict.era === 'legacy';
    return verdict.era;
  }

  /** The verdict read beside an opening is not used (a legacy SSE transport has no era to probe). */
  unused(): void {
    this.fromStore = false;
  }

  /** A discovery or a handshake succeeded: its era is stored (and its session, with `resumeSession`). */
  learned(session: SessionInfo, transport?: Transport): void {
    this.fromStore = false;
    const age = this.known?.era === session.era ? Date.now() - this.known.learnedAt : Infinity;
    if (age >= Math.max(REWRITE_AFTER_MS, this.context.config.eraVerdictMaxAgeMs / 2)) {
      this.known = { era: session.era, learnedAt: Date.now() };
      this.stored.rememberEra(session.era, session.protocolVersion);
    }
    if (session.era !== 'legacy' || !this.context.config.resumeSession) return;
    const sessionId = transport?.sessionToKeep?.();
    if (sessionId !== undefined) this.stored.rememberSession(sessionId, session);
  }

  /**
   * The handshake of a connection whose era came from the store: refused, the verdict is dropped
   * (a fatal refusal becomes a plain one: the era is probed again, nothing is known to be wrong).
   */
  async checked(attempt: Promise<SessionInfo>): Promise<SessionInfo> {
    const fromStore = this.fromStore;
    this.fromStore = false;
    try {
      return await attempt;
    } catch (error) {
      if (!fromStore || saysNothingOfTheEra(error)) throw error;
      this.known = undefined;
      await this.stored.dropEra();
      if (!(error instanceof McpSupervisorError) || !error.fatal) throw error;
      throw new ProtocolError(
        `the stored era verdict (2025 era) was refused, the era is probed again: ${describeError(error)}`,
        {
          server: this.context.name,
          cause: error,
        },
      );
    }
  }

  /** `resumeSession`: the stored session, taken up and checked with one `ping`; undefined: a handshake is needed. */
  async resumeSession(transport: Transport): Promise<SessionInfo | undefined> {
    if (!this.context.config.resumeSession || this.resumeTried || !transport.resumeSession) return undefined;
    const stored = await this.stored.session();
    // A damaged entry (an id that is not visible ASCII, a version we do not speak) never reaches a header.
    const usable = stored && isSupportedProtocolVersion(stored.session.protocolVersion);
    if (!usable || !transport.resumeSession(stored.sessionId, stored.session.protocolVersion)) {
      this.resumeTried = true;
      if (stored) await this.stored.dropSession();
      return undefined;
    }
    try {
      await this.probes.sendPastGate('ping', undefined, probeTimeoutMs(this.context.config), false);
    } catch (error) {
      // Unreachable, or no answer: the next attempt tries the stored session again.
      if (!sessionRefused(error)) throw error;
      this.resumeTried = true;
      await this.stored.dropSession();
      return undefined;
    }
    this.resumeTried = true;
    return { ...stored.session, era: 'legacy', sessionGeneration: transport.sessionGeneration };
  }
}

/** A failure that says nothing of the server's era: it was unreachable, slow, or wants credentials. */
function saysNothingOfTheEra(error: unknown): boolean {
  return (
    error instanceof AuthorizationRequiredError ||
    error instanceof ConnectionClosedError ||
    error instanceof RequestTimeoutError ||
    (error instanceof TransportError && (error.status === undefined || error.status >= 500))
  );
}

/** The server no longer knows the session: 404, or 400 naming it. A JSON-RPC error is an answer on it. */
function sessionRefused(error: unknown): boolean {
  return error instanceof SessionExpiredError || (error instanceof TransportError && error.status === 400);
}
