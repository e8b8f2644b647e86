/**
 * Token stores: where a server's tokens and client registration live between authorizations.
 * In memory by default; values are copied in and out so callers cannot mutate what is stored.
 */
import { isObject } from '../core/is-object.js';
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { AuthorizationError, ConfigError } from '../core/errors.js';
import type { StoredAuthorization, TokenStore } from './types.js';
import { serialised } from '../core/serialised.js';

export function memoryTokenStore(): TokenStore {
  const entries = new Map<string, StoredAuthorization>();
  return {
    async load(key) {
      const value = entries.get(key);
      return value === undefined ? undefined : structuredClone(value);
    },
    async save(key, value) {
      entries.set(key, structuredClone(value));
    },
    async clear(key) {
      entries.delete(key);
    },
  };
}

/**
 * A token store in one JSON file: an object mapping each key (the canonical resource URL) to its
 * `StoredAuthorization`.
 *
 * - The file holds bearer and refresh tokens, so it is only ever written through a temp file created
 *   with mode 0600 in the same directory (fsync, then rename over the target). A reader sees the old
 *   file or the new one, never half of one, and a file that had wider permissions ends up 0600.
 *   A missing parent directory is created with mode 0700. (POSIX modes; Windows ignores them.)
 * - Every operation re-reads the file, so edits by other processes are seen. Within one process all
 *   operations on the same path (from any number of stores) run one at a time, so saves of different
 *   keys never lose each other. There is no lock between processes: two processes saving at the same
 *   instant may lose one update, but never corrupt the file.
 * - A corrupt file (not JSON, or not an object of objects) makes `load`, `save` and `clear` reject
 *   with a fatal `AuthorizationError` naming the path, rather than reading as empty: treating it as
 *   empty would silently start a new authorization and then overwrite a file a person may want to
 *   repair. Fix or delete the file. An empty (or whitespace-only) file reads as an empty store.
 *   Error messages never include the file's contents.
 * - Values are copied in (as JSON, when `save` is called) and out (freshly parsed on each `load`).
 */
export function fileTokenStore(path: string): TokenStore {
  if (typeof path !== 'string' || path.length === 0)
    throw new ConfigError('fileTokenStore needs a non-empty file path');
  // Resolved once, so a later process.chdir() cannot move the store.
  const file = resolve(path);
  return {
    async load(key) {
      checkKey(key);
      return serialised(file, async () => (await readEntries(file)).get(key));
    },
    async save(key, value) {
      checkKey(key);
      const copy = snapshot(value);
      return serialised(file, async () => {
        const entries = await readEntries(file);
        entries.set(key, copy);
        await writeEntries(file, entries);
      });
    },
    async clear(key) {
      checkKey(key);
      return serialised(file, async () => {
        const entries = await readEntries(file);
        if (entries.delete(key)) await writeEntries(file, entries);
      });
    },
  };
}

function checkKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) throw new ConfigError('token store keys must be non-empty strings');
}

function snapshot(value: StoredAuthorization): StoredAuthorization {
  if (!isObject(value)) throw new ConfigError('a token store value must be an object');
  try {
    return JSON.parse(JSON.stringify(value)) as StoredAuthorization;
  } catch {
    throw new ConfigError('a token store value must be JSON-serialisable');
  }
}

async function readEntries(file: string): Promise<Map<string, StoredAuthorization>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return new Map();
    throw ioError(`cannot read the token store ${file}`, error);
  }
  if (text.trim() === '') return new Map();
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    // No cause: V8's SyntaxError quotes the text around the error, which may be a token.
    throw corrupt(file, 'is not valid JSON');
  }
  if (!isObject(data)) throw corrupt(file, 'is not a JSON object of key → authorization');
  const entries = new Map<string, StoredAuthorization>();
  for (const [key, value] of Object.entries(data)) {
    if (!isObject(value)) throw corrupt(file, 'has an entry that is not an object');
    entries.set(key, value);
  }
  return entries;
}

async function writeEntries(file: string, entries: Map<string, StoredAuthorization>): Promise<void> {
  const dir = dirname(file);
  // Object.fromEntries defines own properties, so a key such as "__proto__" stays an ordinary key.
  const text = `${JSON.stringify(Object.fromEntries(entries), null, 2)}\n`;
  const temp = join(dir, `.${basename(file)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  let handle: FileHandle | undefined;
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    handle = await open(temp, 'wx', 0o600);
    // The umask can only narrow the mode; this makes it exactly 0600 whatever the umask.
    await handle.chmod(0o600);
    await handle.writeFile(text, 'utf8');
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, file);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await rm(temp, { force: true }).catch(() => undefined);
    throw ioError(`cannot write the token store ${file}`, error);
  }
  await syncDirectory(dir);
}

/** Makes the rename itself durable. Not possible everywhere (Windows), and then not needed. */
async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // best effort
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

function corrupt(file: string, what: string): AuthorizationError {
  return new AuthorizationError(`the token store ${file} ${what}; fix or delete it`, { fatal: true });
}

/** Errors that trying again will not fix end the server; the rest (ENOSPC, EMFILE, …) may pass. */
const PERMANENT_ERRNO = new Set(['EACCES', 'EPERM', 'EISDIR', 'ENOTDIR', 'EROFS', 'ELOOP', 'ENAMETOOLONG']);

function ioError(message: string, error: unknown): AuthorizationError {
  const errno = errnoOf(error);
  return new AuthorizationError(errno ? `${message} (${errno})` : message, {
    cause: error,
    fatal: errno !== undefined && PERMANENT_ERRNO.has(errno),
  });
}

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
