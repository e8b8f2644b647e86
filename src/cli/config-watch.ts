/**
 * `watch --config`: follow the files. A change (debounced: editors write in several steps) loads
 * every file again and applies the result to the running supervisor; a file that no longer
 * parses changes nothing, and the reason is shown.
 */
import { watch as watchFs, type FSWatcher } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { ApplyResult } from '../config/diff.js';
import type { AuthOptions, PreparedAuth } from './oauth-setup.js';
import type { ServerMap } from './load-config.js';
import { describeError } from '../core/errors.js';

const DEBOUNCE_MS = 150;

export interface FileWatcher {
  close(): void;
}

/**
 * Calls `onChange` once a burst of changes to any of `files` has settled. The folders are
 * watched, not the files: an editor that saves by renaming a new file over the old one would end
 * a watch on the file itself.
 */
export function watchFiles(files: readonly string[], onChange: () => void, debounceMs = DEBOUNCE_MS): FileWatcher {
  const byFolder = new Map<string, Set<string>>();
  for (const file of files) {
    const path = resolve(file);
    const names = byFolder.get(dirname(path)) ?? new Set<string>();
    names.add(basename(path));
    byFolder.set(dirname(path), names);
  }
  let timer: NodeJS.Timeout | undefined;
  const watchers: FSWatcher[] = [];
  for (const [folder, names] of byFolder) {
    const watcher = watchFs(folder, (_event, name) => {
      if (name !== null && !names.has(name.toString())) return;
      clearTimeout(timer);
      timer = setTimeout(onChange, debounceMs);
    });
    watcher.on('error', () => {});
    watchers.push(watcher);
  }
  return {
    close() {
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
    },
  };
}

export interface ReloadContext {
  /** Loads every source again (throws UsageError naming the file on a mistake). */
  load: () => ServerMap;
  /** Completes OAuth options for new or changed entries (the CLI's token file and redirect). */
  prepare: (servers: ServerMap, options?: Partial<AuthOptions>) => Promise<PreparedAuth>;
  /** Servers that do not come from the files (the demo's): kept as they are. */
  fixed: ServerMap;
  apply: (servers: ServerMap) => Promise<ApplyResult>;
}

/** The running state of a reload loop: what was loaded last, and what it was prepared into. */
export class Reloader {
  private closers: (() => Promise<void>)[] = [];
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly context: ReloadContext,
    private loaded: ServerMap,
    private prepared: ServerMap,
  ) {}

  /** Loads and applies; resolves with the line to show (the change, or why nothing changed). */
  reload(): Promise<string> {
    const next = this.running.then(() => this.reloadOnce());
    this.running = next.catch(() => {});
    return next;
  }

  private async reloadOnce(): Promise<string> {
    let loaded: ServerMap;
    try {
      loaded = this.context.load();
    } catch (error) {
      return `config not applied, the servers run as before: ${describeError(error)}`;
    }
    // Unchanged entries keep their prepared config (their OAuth provider, its login).
    const changed: ServerMap = {};
    const servers: ServerMap = {};
    for (const [name, config] of Object.entries(loaded)) {
      if (Object.hasOwn(this.loaded, name) && sameEntry(this.loaded[name], config))
        servers[name] = this.prepared[name]!;
      else changed[name] = config;
    }
    const auth = await this.context.prepare(changed);
    this.closers.push(auth.close);
    Object.assign(servers, auth.servers);
    let result: ApplyResult;
    try {
      result = await this.context.apply({ ...servers, ...this.context.fixed });
    } catch (error) {
      return `config not applied, the servers run as before: ${describeError(error)}`;
    }
    this.loaded = loaded;
    this.prepared = servers;
    return describeResult(result);
  }

  async close(): Promise<void> {
    await this.running;
    await Promise.all(this.closers.map((close) => close()));
  }
}

function sameEntry(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** `config reloaded: added a; removed b; restarted c (2 unchanged)` */
export function describeResult(result: ApplyResult): string {
  const parts = (['added', 'removed', 'restarted', 'enabled', 'disabled'] as const)
    .filter((key) => result[key].length > 0)
    .map((key) => `${key} ${result[key].join(', ')}`);
  const unchanged = result.unchanged.length > 0 ? ` (${result.unchanged.length} unchanged)` : '';
  return parts.length === 0 ? 'config reloaded: no changes' : `config reloaded: ${parts.join('; ')}${unchanged}`;
}
