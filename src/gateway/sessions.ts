/**
 * The host's sessions the gateway serves now, and what goes out to them: list changes, log
 * messages, resource updates, and the requests upstream servers make of a client (elicitation,
 * sampling, roots), sent to the session whose call the server is answering, else to the most
 * recent session that can take them.
 */
import { Server, type ServerNotifier } from '@modelcontextprotocol/server';
import { LOGGING_LEVELS, type LoggingLevel } from '../protocol/results.js';
import type { LogMessage } from '../runtime/context/events.js';
import type { ClientHandlers, HandlerContext } from '../runtime/server-input/server-requests.js';
import type { InputMethod } from './input-exchange.js';
import { LegacyTaskInputs } from './legacy-task-input.js';
import type { RequestId } from '../protocol/jsonrpc.js';

type ClientFeature = 'elicitation' | 'sampling' | 'roots';

/** A 2026-07-28 host's call: the server's questions go into the host's input rounds (input-exchange.ts). */
export type Ask = (
  method: InputMethod,
  params: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

/** A 2026-07-28 host's request as the server's questions see it: the capabilities on its envelope. */
export interface CallHost {
  getClientCapabilities(): ReturnType<Server['getClientCapabilities']>;
}

interface Call {
  /** A 2025 session (its requests pushed to it), or a 2026-07-28 host's request (asked through `ask`). */
  session: Server | CallHost;
  requestId: RequestId;
  ask: Ask | undefined;
}

type Target = { ask: Ask } | { session: Server; relatedRequestId?: RequestId; ask?: undefined };

/** What a 2025 host session asked of the gateway after its handshake: kept with it (kept-sessions.ts). */
export interface HostFacts {
  /** `logging/setLevel`: log messages below it are not sent to this session. */
  level?: LoggingLevel | undefined;
  /** `resources/subscribe`, as the host named them. */
  subscriptions: Set<string>;
}

export class Sessions {
  /** Sessions that stay (2025 sessions over HTTP, stdio connections): newest last. */
  private readonly open = new Set<Server>();
  /** The modern HTTP handlers' change-event buses. */
  private readonly notifiers = new Set<ServerNotifier>();
  private readonly cleanups = new Map<Server, () => Promise<void>>();
  private readonly facts = new WeakMap<Server, HostFacts>();
  /** Told when a session's facts changed (the HTTP service keeps them in the store). */
  private readonly factWatchers = new WeakMap<Server, () => void>();
  /** Tool calls in flight per upstream server. */
  private readonly calls = new Map<string, Call[]>();
  /** 2025-11-25 upstream tasks whose questions 2026-07-28 hosts answer with tasks/update. */
  readonly taskInputs = new LegacyTaskInputs();

  get size(): number {
    return this.open.size;
  }

  add(session: Server): void {
    this.open.delete(session);
    this.open.add(session);
  }

  remove(session: Server): void {
    this.open.delete(session);
    const cleanup = this.cleanups.get(session);
    if (!cleanup) return;
    this.cleanups.delete(session);
    void cleanup().catch(() => {});
  }

  /** Runs once `session` is gone (its own upstream connections closed). */
  onRemove(session: Server, cleanup: () => Promise<void>): void {
    this.cleanups.set(session, cleanup);
  }

  /** The session's facts (none yet: no level, no subscription). */
  factsOf(session: Server): HostFacts {
    let facts = this.facts.get(session);
    if (!facts) this.facts.set(session, (facts = { subscriptions: new Set() }));
    return facts;
  }

  /** `changed` runs whenever the session's facts change. */
  watchFacts(session: Server, changed: () => void): void {
    this.factWatchers.set(session, changed);
  }

  setLevel(session: Server, level: LoggingLevel): void {
    this.factsOf(session).level = level;
    this.factWatchers.get(session)?.();
  }

  subscribed(session: Server, uri: string, on: boolean): void {
    const { subscriptions } = this.factsOf(session);
    if (subscriptions.has(uri) === on) return;
    if (on) subscriptions.add(uri);
    else subscriptions.delete(uri);
    this.factWatchers.get(session)?.();
  }

  addNotifier(notifier: ServerNotifier): void {
    this.notifiers.add(notifier);
  }

  removeNotifier(notifier: ServerNotifier): void {
    this.notifiers.delete(notifier);
  }

  /** A call to `server` made for `session`: until it ends, the server's requests go to that session. */
  beginCall(server: string, session: Server | CallHost, requestId: RequestId, ask?: Ask): Call {
    const call = { session, requestId, ask };
    const list = this.calls.get(server);
    if (list) list.push(call);
    else this.calls.set(server, [call]);
    return call;
  }

  endCall(server: string, call: Call): void {
    const list = this.calls.get(server);
    if (!list) return;
    const index = list.indexOf(call);
    if (index >= 0) list.splice(index, 1);
    if (list.length === 0) this.calls.delete(server);
  }

  toolsChanged(): void {
    for (const session of this.open) void session.sendToolListChanged().catch(() => {});
    for (const notifier of this.notifiers) notifier.toolsChanged();
  }

  resourcesChanged(): void {
    for (const session of this.open) void session.sendResourceListChanged().catch(() => {});
    for (const notifier of this.notifiers) notifier.resourcesChanged();
  }

  promptsChanged(): void {
    for (const session of this.open) void session.sendPromptListChanged().catch(() => {});
    for (const notifier of this.notifiers) notifier.promptsChanged();
  }

  resourceUpdated(uri: string): void {
    for (const session of this.open) void session.sendResourceUpdated({ uri }).catch(() => {});
    for (const notifier of this.notifiers) notifier.resourceUpdated(uri);
  }

  /** An upstream server's log message, to every session whose level it reaches. */
  log(server: string, message: LogMessage): void {
    const logger = message.logger === undefined ? server : `${server}/${message.logger}`;
    const params = { level: message.level, logger, data: message.data } as Parameters<Server['sendLoggingMessage']>[0];
    const severity = (LOGGING_LEVELS as readonly string[]).indexOf(message.level);
    for (const session of this.open) {
      const level = this.facts.get(session)?.level;
      if (level !== undefined && severity < LOGGING_LEVELS.indexOf(level)) continue;
      void session.sendLoggingMessage(params).catch(() => {});
    }
  }

  /** Where a server's request goes: the session of its call in flight, else the newest session that can take it. */
  target(server: string, feature: ClientFeature): Target | undefined {
    const calls = this.calls.get(server);
    if (calls) {
      for (let i = calls.length - 1; i >= 0; i--) {
        const call = calls[i]!;
        if (call.ask) {
          if (declares(call.session, feature)) return { ask: call.ask };
        } else if (call.session instanceof Server && supports(call.session, feature))
          return { session: call.session, relatedRequestId: call.requestId };
      }
    }
    const sessions = [...this.open];
    for (let i = sessions.length - 1; i >= 0; i--)
      if (supports(sessions[i]!, feature)) return { session: sessions[i]! };
    return undefined;
  }

  async close(): Promise<void> {
    this.taskInputs.close();
    const sessions = [...this.open];
    this.open.clear();
    await Promise.allSettled(sessions.map((session) => session.close()));
  }
}

/** Whether the host declared the capability (a 2026-07-28 host, on the request's envelope). */
function declares(session: Server | CallHost, feature: ClientFeature): boolean {
  return session.getClientCapabilities()?.[feature] !== undefined;
}

/** A 2025 session whose client declared the capability (a 2026-07-28 one is asked through input rounds, not pushed requests). */
function supports(session: Server, feature: ClientFeature): boolean {
  if (!declares(session, feature)) return false;
  const version = session.getNegotiatedProtocolVersion();
  return version === undefined || version < '2026';
}

/** Whether a server's request (elicitation, sampling, roots) can be pushed to this 2025 session's host. */
export function takesRequests(session: Server): boolean {
  return supports(session, 'elicitation') || supports(session, 'sampling') || supports(session, 'roots');
}

/** The supervisor's client handlers: each request of an upstream server goes to a host session. */
export function forwardingHandlers(sessions: Sessions): ClientHandlers {
  const forward =
    (
      feature: ClientFeature,
      method: InputMethod,
      send: (session: Server, params: never, options: object) => Promise<unknown>,
    ) =>
    async (params: Record<string, unknown>, context: HandlerContext): Promise<Record<string, unknown>> => {
      // A 2025-11-25 task's question, read by the gateway for the 2026-07-28 hosts of the task.
      const forTask = sessions.taskInputs.ask(context.server, method, params, context.signal);
      if (forTask) return forTask;
      const target = sessions.target(context.server, feature);
      if (!target) throw new Error(`no connected host supports ${feature} (asked by server '${context.server}')`);
      if (target.ask) return target.ask(method, params, context.signal);
      const options = { signal: context.signal, relatedRequestId: target.relatedRequestId };
      return (await send(target.session, params as never, options)) as Record<string, unknown>;
    };
  const elicit = (session: Server, params: never, options: object) => session.elicitInput(params, options);
  return {
    elicitation: forward('elicitation', 'elicitation/create', elicit),
    urlElicitation: forward('elicitation', 'elicitation/create', elicit),
    sampling: forward('sampling', 'sampling/createMessage', (session, params, options) =>
      session.createMessage(params, options),
    ),
    roots: forward('roots', 'roots/list', (session, params, options) => session.listRoots(params, options)),
  };
}
