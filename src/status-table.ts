/**
 * The status of all of a supervisor's servers as one frozen record, kept while no server's status
 * changed. A server's status is itself kept while nothing it is read from changed
 * (server-status.ts), so a poll of 10,000 servers compares 10,000 entries instead of building them.
 * Frozen because it is shared: every reader (the agent, the dashboard) gets the same object.
 */
import type { ServerConfig } from './config/server-config.js';
import type { ServerStatus } from './server-handle.js';
import { sharedStatus, type StatusSource } from './server-status.js';
import { disabledStatus } from './supervised-server.js';

export class StatusTable {
  /** The last table and the entries it was built from, in order. */
  private last: { statuses: Readonly<ServerStatus>[]; all: Readonly<Record<string, ServerStatus>> } | undefined;
  /** A disabled server's status, frozen, while its config is the same object. */
  private readonly disabled = new WeakMap<ServerConfig, Readonly<ServerStatus>>();

  /** `servers` by name; those `started` says no of (being added or removed) are left out. */
  read(
    servers: ReadonlyMap<string, StatusSource>,
    started: (name: string) => boolean,
    disabledConfigs: Iterable<ServerConfig>,
    restartsOf: (name: string) => number,
  ): Record<string, ServerStatus> {
    const last = this.last;
    const statuses: Readonly<ServerStatus>[] = [];
    let changed = last === undefined;
    for (const [name, server] of servers) {
      if (!started(name)) continue;
      const status = sharedStatus(server, restartsOf);
      if (!changed && last!.statuses[statuses.length] !== status) changed = true;
      statuses.push(status);
    }
    for (const config of disabledConfigs) {
      let status = this.disabled.get(config);
      if (!status) this.disabled.set(config, (status = Object.freeze(disabledStatus(config))));
      if (!changed && last!.statuses[statuses.length] !== status) changed = true;
      statuses.push(status);
    }
    if (!changed && last!.statuses.length === statuses.length) return last!.all;
    const all: Record<string, ServerStatus> = {};
    for (const status of statuses) all[status.name] = status;
    this.last = { statuses, all: Object.freeze(all) };
    return this.last.all;
  }
}
