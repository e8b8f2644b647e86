/**
 * The store in one JSON file, shared by every process on the machine that opens the same path
 * (the CLI's default). Each operation runs under a cross-process lock on the file (proper-lockfile:
 * a lock directory beside it whose mtime the holder keeps fresh, so the lock of a holder that was
 * SIGKILLed goes stale and is taken over), reads the file, and writes it back through a temp file
 * renamed over it. Lease locks and their fencing tokens live in the file too, so a token grows
 * across processes and a lease outlives nobody: a holder that died is taken over after `leaseMs`.
 *
 * - Mode 0600 for the file, 0700 for a directory it creates: it holds refresh tokens.
 * - A file that is not this store's JSON rejects every operation with a StoreCorruptError naming
 *   the file (never its contents); nothing is overwritten. An empty file is an empty store.
 * - A file system error rejects with a StoreUnavailableError (the errno, never the contents).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import lockfile from 'proper-lockfile';
import { ConfigError } from '../core/errors.js';
import { StoreCorruptError, StoreFencedError, StoreUnavailableError } from './errors.js';
import { isObject } from '../core/is-object.js';
import { checkFence, checkLockOptions, checkStoreKey, jsonCopy } from './checks.js';
import type { Store, StoreEntry, StoreLease, StoreLockOptions, StoreSetOptions, StoreSetResult } from './types.js';
import { serialised } from '../core/serialised.js';

interface FileEntry {
  /** The value as JSON text, so that it is copied out by parsing. */
  json: string;
  version: number;
  expiresAt?: number | undefined;
}

interface FileLease {
  /** The last token granted for this name (it only grows). */
  token: number;
  /** The token of the current holder, if any; its lease ends at `until`. */
  holder?: number | undefined;
  until: number;
}

interface FileData {
  version: number;
  entries: Record<string, FileEntry>;
  leases: Record<string, FileLease>;
}

/** The file lock: a holder that stopped updating it for this long (a SIGKILLed process) is stale. */
const MUTEX_STALE_MS = 5_000;
const MUTEX_RETRIES = { retries: 1_000, minTimeout: 2, maxTimeout: 25, factor: 1.3, randomize: true };

export interface FileStoreOptions {
  /** How often a lock waiter looks again, in ms (default 20). */
  pollMs?: number | undefined;
}

export function fileStore(path: string, options: FileStoreOptions = {}): Store {
  if (typeof path !== 'string' || path.length === 0) throw new ConfigError('fileStore needs a non-empty file path');
  // Resolved once, so a later process.chdir() cannot move the store.
  const file = resolve(path);
  const name = `file ${file}`;
  const pollMs = options.pollMs ?? 20;

  /** One read-modify-write under the cross-process lock; `change` returns whether to write. */
  const update = <T>(change: (data: FileData, now: number) => { result: T; write: boolean }): Promise<T> =>
    serialised(file, async () => {
      await ensureDirectory(file, name);
      const release = await lockFile(file, name);
      try {
        const data = await readData(file, name);
        const now = Date.now();
        const { result, write } = change(data, now);
        if (write) await writeData(file, name, data, now);
        return result;
      } finally {
        await release().catch(() => undefined);
      }
    });

  const read = <T>(look: (data: FileData, now: number) => T): Promise<T> =>
    update((data, now) => ({ result: look(data, now), write: false }));

  const leaseOf = (lockName: string, token: number, leaseMs: number): StoreLease => ({
    token,
    renew: () =>
      update((data, now) => {
        const lease = data.leases[lockName];
        if (lease?.holder !== token || lease.until <= now) return { result: false, write: false };
        lease.until = now + leaseMs;
        return { result: true, write: true };
      }),
    release: () =>
      update((data) => {
        const lease = data.leases[lockName];
        if (lease?.holder !== token) return { result: undefined, write: false };
        lease.holder = undefined;
        lease.until = 0;
        return { result: undefined, write: true };
      }),
  });

  return {
    name,
    async get<T>(key: string): Promise<StoreEntry<T> | undefined> {
      checkStoreKey(key);
      return read((data, now) => {
        const entry = live(data, key, now);
        return entry && { value: JSON.parse(entry.json) as T, version: entry.version };
      });
    },
    async set<T>(key: string, value: T, options: StoreSetOptions = {}): Promise<StoreSetResult<T>> {
      checkStoreKey(key);
      const json = jsonCopy(key, value);
      const fence = options.fence;
      if (fence) checkFence(fence);
      return update<StoreSetResult<T>>((data, now) => {
        const newest = fence && Object.hasOwn(data.leases, fence.lock) ? data.leases[fence.lock]!.token : 0;
        if (fence && newest > fence.token) throw new StoreFencedError(name, fence.token, newest);
        const entry = live(data, key, now);
        if (options.ifVersion !== undefined && (entry?.version ?? 0) !== options.ifVersion) {
          const current = entry && { value: JSON.parse(entry.json) as T, version: entry.version };
          return { result: { ok: false, current }, write: false };
        }
        // Versions grow across deletes too, so a version once seen never names another value.
        const version = ++data.version;
        const expiresAt = options.ttlMs === undefined ? undefined : now + options.ttlMs;
        data.entries[key] = { json, version, ...(expiresAt === undefined ? {} : { expiresAt }) };
        return { result: { ok: true, version }, write: true };
      });
    },
    async delete(key, options = {}) {
      checkStoreKey(key);
      return update((data, now) => {
        const entry = live(data, key, now);
        if (entry === undefined) return { result: false, write: false };
        if (options.ifVersion !== undefined && entry.version !== options.ifVersion)
          return { result: false, write: false };
        delete data.entries[key];
        return { result: true, write: true };
      });
    },
    async lock(lockName: string, lockOptions: StoreLockOptions): Promise<StoreLease | undefined> {
      checkStoreKey(lockName);
      checkLockOptions(lockOptions);
      const deadline = Date.now() + (lockOptions.waitMs ?? 0);
      for (;;) {
        const token = await update((data, now) => {
          const lease = (data.leases[lockName] ??= { token: 0, until: 0 });
          if (lease.holder !== undefined && lease.until > now) return { result: undefined, write: false };
          lease.token += 1;
          lease.holder = lease.token;
          lease.until = now + lockOptions.leaseMs;
          return { result: lease.token, write: true };
        });
        if (token !== undefined) return leaseOf(lockName, token, lockOptions.leaseMs);
        const left = deadline - Date.now();
        if (left <= 0) return undefined;
        await new Promise((wake) => setTimeout(wake, Math.min(left, pollMs)));
      }
    },
  };
}

function live(data: FileData, key: string, now: number): FileEntry | undefined {
  const entry = Object.hasOwn(data.entries, key) ? data.entries[key] : undefined;
  return entry?.expiresAt !== undefined && entry.expiresAt <= now ? undefined : entry;
}

async function ensureDirectory(file: string, name: string): Promise<void> {
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  } catch (error) {
    throw unavailable(name, 'cannot create its directory', error);
  }
}

async function lockFile(file: string, name: string): Promise<() => Promise<void>> {
  try {
    return await lockfile.lock(file, {
      realpath: false,
      stale: MUTEX_STALE_MS,
      update: MUTEX_STALE_MS / 5,
      retries: MUTEX_RETRIES,
      // The lock was taken over as stale while held (this process stalled for seconds): the write
      // under way still goes through the rename, and compare-and-swap catches what it overwrote.
      onCompromised: () => undefined,
    });
  } catch (error) {
    throw unavailable(name, 'cannot take its file lock', error);
  }
}

async function readData(file: string, name: string): Promise<FileData> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return { version: 0, entries: {}, leases: {} };
    throw unavailable(name, 'cannot read it', error);
  }
  if (text.trim() === '') return { version: 0, entries: {}, leases: {} };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // No cause: V8's SyntaxError quotes the text around the error, which may be a token.
    throw new StoreCorruptError(name, 'is not valid JSON');
  }
  if (
    !isObject(data) ||
    typeof data['version'] !== 'number' ||
    !isObject(data['entries']) ||
    !isObject(data['leases']) ||
    !Object.values(data['entries']).every((e) => isObject(e) && typeof e['json'] === 'string')
  ) {
    throw new StoreCorruptError(name, 'is not a store file (version, entries, leases)');
  }
  return data as unknown as FileData;
}

async function writeData(file: string, name: string, data: FileData, now: number): Promise<void> {
  for (const [key, entry] of Object.entries(data.entries)) {
    if (entry.expiresAt !== undefined && entry.expiresAt <= now) delete data.entries[key];
  }
  const dir = dirname(file);
  const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, 'wx', 0o600);
    // The umask can only narrow the mode; this makes it exactly 0600 whatever the umask.
    await handle.chmod(0o600);
    await handle.writeFile(`${JSON.stringify(data)}\n`, 'utf8');
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, file);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await rm(temp, { force: true }).catch(() => undefined);
    throw unavailable(name, 'cannot write it', error);
  }
}

function unavailable(name: string, what: string, error: unknown): StoreUnavailableError {
  const errno = errnoOf(error);
  return new StoreUnavailableError(name, errno ? `${what}: ${errno}` : what, { cause: error });
}

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
