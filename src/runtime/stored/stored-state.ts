/**
 * What one server's runtime keeps in the supervisor's store so that a restarted process (or
 * another replica) need not learn it again: the era verdict, the tool list, task references and,
 * opt-in, the 2025-era session. Built only when a store was given: without one nothing is stored.
 *
 * The store is read when a connection opens, a catalog is first listed or a task is resumed;
 * never per request. A store that fails or hangs is one warning (StoreUnavailableError) and the
 * runtime goes on as if nothing were stored: everything here can be learned from the server again.
 */
import type { Era, SessionInfo } from '../../../machines/connection.types.js';
import { isObject } from '../../core/is-object.js';
import type { Tool } from '../../protocol/messages.js';
import { stateKeys, type ListScope } from '../../store/state-keys.js';
import type { Store } from '../../store/types.js';
import { StoreUnavailableError } from '../../store/errors.js';

/** A read that takes longer is given up: the connection does not wait for a store that hangs. */
const READ_TIMEOUT_MS = 2_000;

async function bounded<T>(operation: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${READ_TIMEOUT_MS} ms`)), READ_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([operation, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** What was learned of a server's era, and when (epoch ms). */
export interface EraVerdict {
  era: Era;
  protocolVersion: string;
  learnedAt: number;
}

/** A 2025-era session as its handshake left it (`resumeSession`). The session id is a secret. */
export interface StoredSession {
  sessionId: string;
  session: Omit<SessionInfo, 'sessionGeneration'>;
  savedAt: number;
}

/** A tool list and until when the server said it stays fresh (epoch ms). */
export interface StoredTools {
  tools: Tool[];
  freshUntil: number;
}

/**
 * A task as another process can pick it up (`handle.tasks.resume(ref)`): plain JSON, safe to
 * log (no secret), to put in a queue, a database, a workflow engine's state.
 */
export interface TaskReference {
  /** The server's identity (a digest of its URL or command), not its display name. */
  readonly server: string;
  /** The era the task was created in: its methods and shapes. */
  readonly era: Era;
  readonly taskId: string;
  /** What created the task; only `tools/call` today. */
  readonly operation: 'tools/call';
  /** The tool it runs: its result is checked against this tool's output schema. */
  readonly tool: string;
  /** When it was created (ISO 8601). */
  readonly createdAt: string;
}

export class StoredState {
  /** Writes not yet settled (flush() waits for them). */
  private readonly writes = new Set<Promise<unknown>>();
  /** One warning per outage: set by a failure, cleared by the next success. */
  private failing = false;

  constructor(
    readonly store: Store,
    /** The server's identity (server-identity.ts). */
    readonly server: string,
    private readonly name: string,
    private readonly warn: (error: Error) => void,
    /** Whose requests these are (server-identity.ts: authorizationContext); private lists are kept under it. */
    readonly authContext?: string | undefined,
  ) {}

  // ---- era verdicts

  /** The stored verdict, if younger than `maxAgeMs`. */
  async era(maxAgeMs: number): Promise<EraVerdict | undefined> {
    if (maxAgeMs === 0) return undefined;
    const verdict = await this.read<EraVerdict>(stateKeys.era(this.server), 'read the era verdict');
    if (!isObject(verdict) || (verdict.era !== 'legacy' && verdict.era !== 'modern')) return undefined;
    if (typeof verdict.learnedAt !== 'number' || Date.now() - verdict.learnedAt > maxAgeMs) return undefined;
    return verdict;
  }

  rememberEra(era: Era, protocolVersion: string): void {
    const verdict: EraVerdict = { era, protocolVersion, learnedAt: Date.now() };
    this.write('write the era verdict', () => this.store.set(stateKeys.era(this.server), verdict));
  }

  /** A verdict that failed: the next connection probes again. */
  dropEra(): Promise<void> {
    return this.remove(stateKeys.era(this.server), 'drop the era verdict');
  }

  // ---- the 2025-era session (resumeSession)

  async session(): Promise<StoredSession | undefined> {
    const stored = await this.read<StoredSession>(stateKeys.session(this.server), 'read the session');
    if (!isObject(stored) || typeof stored.sessionId !== 'string' || !isObject(stored.session)) return undefined;
    return stored;
  }

  rememberSession(sessionId: string, session: SessionInfo): void {
    const { sessionGeneration: _, ...kept } = session;
    const stored: StoredSession = { sessionId, session: kept, savedAt: Date.now() };
    this.write('write the session', () => this.store.set(stateKeys.session(this.server), stored));
  }

  dropSession(): Promise<void> {
    return this.remove(stateKeys.session(this.server), 'drop the session');
  }

  // ---- tool lists

  /** The stored list of that scope; a private one only under this server's authorization context. */
  async tools(scope: ListScope): Promise<StoredTools | undefined> {
    const key = this.toolsKey(scope);
    if (key === undefined) return undefined;
    const stored = await this.read<StoredTools>(key, 'read the tool list');
    if (!isObject(stored) || !Array.isArray(stored.tools) || typeof stored.freshUntil !== 'number') return undefined;
    return stored.freshUntil > Date.now() ? stored : undefined;
  }

  /** Kept for the server's `ttlMs` (the store forgets it then too). */
  rememberTools(tools: readonly Tool[], ttlMs: number, scope: ListScope): void {
    const key = this.toolsKey(scope);
    if (key === undefined) return; // private, and whose it is is unknown: never shared
    const stored: StoredTools = { tools: [...tools], freshUntil: Date.now() + ttlMs };
    this.write('write the tool list', () => this.store.set(key, stored, { ttlMs }));
  }

  /** The list changed on the server: no process should serve the stored one. */
  forgetTools(): void {
    for (const key of [this.toolsKey('public'), this.toolsKey('private')]) {
      if (key !== undefined) this.write('drop the tool list', () => this.store.delete(key));
    }
  }

  private toolsKey(scope: ListScope): string | undefined {
    if (scope === 'public') return stateKeys.tools(this.server);
    return this.authContext === undefined ? undefined : stateKeys.tools(this.server, this.authContext);
  }

  // ---- task references

  /** A task created here, kept for another process (for `ttlMs` when the server gave the task a lifetime). */
  rememberTask(reference: TaskReference, ttlMs: number | undefined): void {
    const key = stateKeys.task(this.server, reference.taskId);
    this.write('write the task reference', async () => {
      await this.store.set(key, reference, ttlMs === undefined ? {} : { ttlMs });
      await this.updateIndex((ids) => (ids.includes(reference.taskId) ? ids : [...ids, reference.taskId]));
    });
  }

  async task(taskId: string): Promise<TaskReference | undefined> {
    const stored = await this.read<TaskReference>(stateKeys.task(this.server, taskId), 'read the task reference');
    if (!isObject(stored) || stored.taskId !== taskId || stored.server !== this.server) return undefined;
    return stored;
  }

  /** The references of this server's tasks not yet known to have ended (the stored ones still there). */
  async tasks(): Promise<TaskReference[]> {
    const ids = await this.read<string[]>(stateKeys.tasks(this.server), 'read the task references');
    if (!Array.isArray(ids)) return [];
    const found = await Promise.all(ids.filter((id) => typeof id === 'string').map((id) => this.task(id)));
    return found.filter((reference): reference is TaskReference => reference !== undefined);
  }

  /** The task ended and its outcome was read: nobody needs to pick it up again. */
  forgetTask(taskId: string): void {
    this.write('drop the task reference', async () => {
      await this.store.delete(stateKeys.task(this.server, taskId));
      await this.updateIndex((ids) => ids.filter((id) => id !== taskId));
    });
  }

  /** Waits for the writes under way (a process that stops leaves what it learned behind), never for a store that hangs. */
  async flush(): Promise<void> {
    if (this.writes.size > 0) await bounded(Promise.allSettled([...this.writes])).catch(() => undefined);
  }

  // ---- the guarded operations

  /** Compare-and-swap on the index, a few times: processes adding tasks at once all land. */
  private async updateIndex(change: (ids: string[]) => string[]): Promise<void> {
    const key = stateKeys.tasks(this.server);
    for (let attempt = 0; attempt < 8; attempt++) {
      const current = await this.store.get<string[]>(key);
      const ids = Array.isArray(current?.value) ? current.value : [];
      const next = change(ids);
      if (current && next === ids) return;
      const written = await this.store.set(key, next, { ifVersion: current?.version ?? 0 });
      if (written.ok) return;
    }
  }

  private async read<T>(key: string, what: string): Promise<T | undefined> {
    try {
      const entry = await bounded(this.store.get<T>(key));
      this.failing = false;
      return entry?.value;
    } catch (error) {
      this.failed(what, error);
      return undefined;
    }
  }

  /** Awaited by a connection opening (a refused verdict or session): bounded like a read. */
  private async remove(key: string, what: string): Promise<void> {
    try {
      await bounded(this.store.delete(key));
    } catch (error) {
      this.failed(what, error);
    }
  }

  private write(what: string, operation: () => Promise<unknown>): void {
    const write = operation().then(
      () => (this.failing = false),
      (error: unknown) => this.failed(what, error),
    );
    this.writes.add(write);
    void write.finally(() => this.writes.delete(write));
  }

  private failed(what: string, error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.warn(
      new StoreUnavailableError(this.store.name, `could not ${what}; going on without it`, {
        server: this.name,
        cause: error,
      }),
    );
  }
}
