/**
 * Every read of undici's private parts, in one place: its request handler and header parser
 * (json-answer.ts and http/listener-stream.ts read a POST's answer and the listening GET in their
 * own dispatch handlers), and a pool's busy flag, its clients and a client's queue size (pool.ts).
 * None is public API: each is looked up once, and where undici keeps it elsewhere it is
 * undefined and its reader falls back (`pool.request`, a body read as a stream, `pool.stats`,
 * idle clients kept). test/unit/undici-internals.test.ts pins the undici they were written for.
 */
import { createRequire } from 'node:module';
import type { Client, Dispatcher, Pool } from 'undici';

/** The undici major these lookups were written for (the test fails on another, to be checked again). */
export const UNDICI_INTERNALS_WRITTEN_FOR = 7;

type Abort = (reason?: Error) => void;

/** undici's dispatch handler calls (its legacy handler interface), as its request handler takes them. */
export interface LegacyHandler {
  onConnect(abort: Abort, context: unknown): void;
  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(trailers: string[] | null): void;
  onError(error: Error): void;
}

/** `pool.request`'s own handler, which answers with `Dispatcher.ResponseData`, and undici's header parser. */
export interface UndiciRequestInternals {
  RequestHandler: new (
    options: Dispatcher.RequestOptions,
    callback: (error: Error | null, answer?: Dispatcher.ResponseData) => void,
  ) => LegacyHandler;
  parseHeaders(rawHeaders: Buffer[]): Record<string, string | string[] | undefined>;
}

export interface UndiciInternals {
  /** Undefined where undici 7 kept them elsewhere: POSTs go through `pool.request`, the GET is a body. */
  readonly request: UndiciRequestInternals | undefined;
  /** A pool's busy flag (no free connection), or undefined when it cannot be read. */
  busy(pool: Pool): boolean | undefined;
  /** The clients a pool holds (its own array: taking one out is how undici drops a client), or undefined. */
  clients(pool: Pool): Client[] | undefined;
  /** The requests queued on a client, or undefined when it cannot be read. */
  queued(client: Client): number | undefined;
  /** Both `clients` and `queued` can be read: a pool may let go of its idle clients. */
  readonly dropsIdleClients: boolean;
}

type Load = (module: string) => unknown;

/** Looks undici's internals up with `load` (a `require`; tests pass one that finds nothing). */
export function lookUpUndiciInternals(load: Load = createRequire(import.meta.url)): UndiciInternals {
  const exported = (module: string, name: string): unknown => {
    try {
      return (load(module) as Record<string, unknown> | undefined)?.[name];
    } catch {
      return undefined;
    }
  };
  const symbol = (module: string, name: string): symbol | undefined => {
    const value = exported(module, name);
    return typeof value === 'symbol' ? value : undefined;
  };
  const RequestHandler = exported('undici/lib/api/api-request.js', 'RequestHandler');
  const parseHeaders = exported('undici/lib/core/util.js', 'parseHeaders');
  const kBusy = symbol('undici/lib/core/symbols.js', 'kBusy');
  const kClients = symbol('undici/lib/dispatcher/pool-base.js', 'kClients');
  const kSize = symbol('undici/lib/core/symbols.js', 'kSize');
  const field = (target: object, key: symbol | undefined): unknown =>
    key === undefined ? undefined : (target as Record<symbol, unknown>)[key];
  return {
    request:
      typeof RequestHandler === 'function' && typeof parseHeaders === 'function'
        ? ({ RequestHandler, parseHeaders } as UndiciRequestInternals)
        : undefined,
    busy: (pool) => {
      const value = field(pool, kBusy);
      return typeof value === 'boolean' ? value : undefined;
    },
    clients: (pool) => {
      const value = field(pool, kClients);
      return Array.isArray(value) ? (value as Client[]) : undefined;
    },
    queued: (client) => {
      const value = field(client, kSize);
      return typeof value === 'number' ? value : undefined;
    },
    dropsIdleClients: kClients !== undefined && kSize !== undefined,
  };
}

/** This process's undici, looked up once. */
export const undiciInternals = lookUpUndiciInternals();
