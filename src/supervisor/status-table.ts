/**
 * The status of all of a supervisor's servers as one frozen record, kept while no server's status
 * changed. A server's status is itself kept while nothing it is read from changed
 * (server-status.ts), so a poll of 10,000 servers compares 10,000 entries instead of building them.
 * Frozen because it is shared: every reader (the agent, the dashboard) gets the same object.
 */
import type { ServerConfig } from '../config/server-config.js';
import type { ServerStatus } from '../handle/server-handle.js';
import { sharedStatus, type StatusSource } from '../handle/status.js';
import { disabledStatus } from './supervised-server.js';

export class StatusTable {
  /** The last table and the entries it was built from, in order. */
  private last: { statuses: Readonly<ServerStatus>[]; all: Readonly<Record<string, ServerStatus>> } | undefined;
  /** A disabled server's status, frozen, while its config is the same object. */
  private readonly disabled = new WeakMap<ServerConfig, Readonly<ServerStatus>>();

  /**
   * `servers` by name; those `started` says no of (being added or removed) are left out
   * (`undefined`: all are started). While nothing changed, the call compares each server's kept
   * status with the last table's entry in place and allocates nothing: a poll of 10,000 spent half
   * its time iterating map entries and building the array it then threw away.
   */
  read(
    servers: ReadonlyMap<string, StatusSource>,
    started: ((name: string) => boolean) | undefined,
    disabledConfigs: ReadonlyMap<string, ServerConfig>,
    restartsOf: (name: string) => number,
  ): Record<string, ServerStatus> {
    const last = this.last;
    if (last !== undefined && this.unchanged(last.statuses, servers, started, disabledConfigs, restartsOf))
      return last.all;
    const statuses: Readonly<ServerStatus>[] = [];
    for (const server of servers.values())
      if (started === undefined || started(server.context.name)) statuses.push(sharedStatus(server, restartsOf));
    for (const config of disabledConfigs.values()) statuses.push(this.disabledStatus(config));
    const all: Record<string, ServerStatus> = {};
    for (const status of statuses) all[status.name] = status;
    this.last = { statuses, all: Object.freeze(all) };
    return this.last.all;
  }

  /** Every server's status now is the last table's entry at its place, and no server came or went. */
  private unchanged(
    kept: readonly Readonly<ServerStatus>[],
    servers: ReadonlyMap<string, StatusSource>,
    started: ((name: string) => boolean) | undefined,
    disabledConfigs: ReadonlyMap<string, ServerConfig>,
    restartsOf: (name: string) => number,
  ): boolean {
    let i = 0;
    for (const server of servers.values()) {
      if (started !== undefined && !started(server.context.name)) continue;
      if (kept[i++] !== sharedStatus(server, restartsOf)) return false;
    }
    for (const config of disabledConfigs.values()) if (kept[i++] !== this.disabledStatus(config)) return false;
    return i === kept.length;
  }

  private disabledStatus(config: ServerConfig): Readonly<ServerStatus> {
    let status = this.disabled.get(config);
    if (!status) this.disabled.set(config, (status = Object.freeze(disabledStatus(config))));
    return status;
  }
}
