/**
 * What the client established on a session and a supervised runtime must not silently drop when
 * the session is replaced (a re-initialization after an expiry, a restart of the server or of
 * the connection): the resource subscriptions, the logging level, and the roots it advertises.
 *
 * The handle records each one when the server accepted it (a subscribe that failed is not
 * recorded; an unsubscribe forgets). After every handshake on a new session, `restore()`
 * re-establishes them, before the held and parked requests are released:
 *
 * 1. `logging/setLevel` with the last level set (when the server declares `logging`);
 * 2. `resources/subscribe` for each subscribed URI (when it declares `resources.subscribe`);
 * 3. `notifications/roots/list_changed` when the application set its roots (`setRoots`) or a
 *    change could not be announced while the connection was down, so the server asks again.
 *
 * A step the server refuses is reported (a `warning` event and the `sessionRestored` summary)
 * and kept: the next session tries again. It never fails the handshake.
 */
import type { LoggingLevel } from '../../protocol/results.js';
import { describeError } from '../../core/errors.js';

export interface Root {
  /** A `file://` URI. */
  uri: string;
  name?: string | undefined;
  _meta?: Record<string, unknown> | undefined;
}

export interface RestoreReport {
  /** The level sent again, if one was set. */
  loggingLevel: LoggingLevel | undefined;
  /** The URIs subscribed again on the new session. */
  subscriptions: string[];
  /** `notifications/roots/list_changed` was sent. */
  rootsAnnounced: boolean;
  /** What the server refused or could not take, with why (secret-free). */
  failed: { what: string; error: string }[];
}

export interface RestoreChannel {
  /** The new session's capabilities, from its initialize result. */
  capabilities: Record<string, unknown>;
  /** A request on the new session, past the request gate (the held requests wait for the restore). */
  request(method: string, params: Record<string, unknown>): Promise<unknown>;
  notify(method: string): Promise<void>;
}

export class SessionState {
  /** Created by the first subscription: an idle server holds no empty Set. */
  private subscriptions: Set<string> | undefined;
  private level: LoggingLevel | undefined;
  private currentRoots: readonly Root[] | undefined;
  /** A roots change the server has not been told about (the connection was down). */
  private rootsNoticeDue = false;

  get loggingLevel(): LoggingLevel | undefined {
    return this.level;
  }

  /** The roots set with `setRoots`, answering `roots/list` (undefined: the `roots` handler answers). */
  get roots(): readonly Root[] | undefined {
    return this.currentRoots;
  }

  subscribed(uri: string): void {
    (this.subscriptions ??= new Set()).add(uri);
  }

  unsubscribed(uri: string): void {
    this.subscriptions?.delete(uri);
  }

  subscribedUris(): string[] {
    return [...(this.subscriptions ?? [])];
  }

  levelSet(level: LoggingLevel): void {
    this.level = level;
  }

  /** New roots; `announced` says whether the server was told already (`false`: tell it on the next session). */
  rootsSet(roots: readonly Root[], announced: boolean): void {
    this.currentRoots = roots.map((root) => ({ ...root }));
    if (!announced) this.rootsNoticeDue = true;
  }

  /** A roots change announced while the same session goes on (after a probe that found it alive). */
  takeRootsNotice(): boolean {
    const due = this.rootsNoticeDue;
    this.rootsNoticeDue = false;
    return due;
  }

  /**
   * Re-establishes the state on a new session. `replacing` is false on the very first session:
   * nothing was established before it, only a roots change made before it is announced.
   */
  async restore(channel: RestoreChannel, replacing: boolean): Promise<RestoreReport | undefined> {
    const uris = this.subscribedUris();
    const announceRoots = this.rootsNoticeDue || (replacing && this.currentRoots !== undefined);
    if (this.level === undefined && uris.length === 0 && !announceRoots) return undefined;
    const report: RestoreReport = { loggingLevel: undefined, subscriptions: [], rootsAnnounced: false, failed: [] };
    const capabilities = channel.capabilities;
    const level = this.level;
    if (level !== undefined) {
      if (!has(capabilities, 'logging')) report.failed.push({ what: 'logging level', error: 'no logging capability' });
      else if (await attempt(report, 'logging level', () => channel.request('logging/setLevel', { level })))
        report.loggingLevel = level;
    }
    if (uris.length > 0) {
      const resources = capabilities['resources'] as Record<string, unknown> | undefined;
      if (resources?.['subscribe'] !== true) {
        for (const uri of uris) report.failed.push({ what: `subscription ${uri}`, error: 'no resources.subscribe' });
      } else {
        await Promise.all(
          uris.map(async (uri) => {
            if (await attempt(report, `subscription ${uri}`, () => channel.request('resources/subscribe', { uri })))
              report.subscriptions.push(uri);
          }),
        );
      }
    }
    if (announceRoots) {
      this.rootsNoticeDue = false;
      report.rootsAnnounced = await attempt(report, 'roots', () => channel.notify('notifications/roots/list_changed'));
      if (!report.rootsAnnounced) this.rootsNoticeDue = true;
    }
    return report;
  }
}

function has(capabilities: Record<string, unknown>, name: string): boolean {
  return typeof capabilities[name] === 'object' && capabilities[name] !== null;
}

async function attempt(report: RestoreReport, what: string, step: () => Promise<unknown>): Promise<boolean> {
  try {
    await step();
    return true;
  } catch (error) {
    report.failed.push({ what, error: describeError(error) });
    return false;
  }
}
