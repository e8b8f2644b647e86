/**
 * A connection's moves after its actor was stopped: the machine's own transitions, run on the
 * snapshot the actor had, with its actions executed as the actor would have executed them (the
 * provided ones through its actor system, the facts told to the runtime as its subscription
 * would, after the step like the actor's deferred effects), and an invoked promise actor run as
 * the host call it stands for (connection-actors.ts), its end fed back as XState's done or error
 * event — until the machine rests with nothing left running.
 *
 * A whole supervisor's stop closes each server this way (`stopAndClose`): what `closing` and
 * `closed` do is what the machine says, with no second copy of it, but without XState's costs
 * per actor that a `CLOSE` sent to 10,000 live actors paid (a quarter of the stop's CPU: the
 * mailbox, the observers' snapshots, the close actor's start with its AbortController, the
 * final state's completion; docs/performance.md, *Branch `stop10k`*). Stopping the actor first
 * stops its children (the listener's stream closes with it) and cancels its delayed events.
 */
import type { Actor, ActorScope, AnyActorLogic, AnyActorRef, ExecutableActionObject, SnapshotFrom } from 'xstate';
import type { ConnectionFact } from '../../../machines/connection.facts.js';
import type { ConnectionEvent, ServerRef } from '../../../machines/connection.types.js';
import { tellFact } from '../lifecycle-facts.js';
import { hostCallOf, type providedConnectionMachine } from './connection-actors.js';
import { runtimeOf } from './runtime-registry.js';

type ConnectionMachine = typeof providedConnectionMachine;
type ConnectionActor = Actor<ConnectionMachine>;
type ConnectionSnapshot = SnapshotFrom<ConnectionMachine>;

/** No invoked call of a stopped connection is aborted: its close ends it, not an abort. */
const NEVER_ABORTED = new AbortController().signal;

/** Stops a connection's actor, then makes the machine's `CLOSE` from where it was, to its end. */
export function stopAndClose(actor: ConnectionActor): Promise<void> {
  const snapshot = actor.getSnapshot();
  actor.stop();
  return moveStopped(actor, snapshot, { type: 'CLOSE' });
}

/** Runs `event` and everything it leads to on `snapshot` (taken before `actor` was stopped). */
async function moveStopped(
  actor: ConnectionActor,
  snapshot: ConnectionSnapshot,
  event: ConnectionEvent,
): Promise<void> {
  const host = runtimeOf(actor.system, snapshot.context.server);
  const running: Array<Promise<ConnectionEvent>> = [];
  const deferred: Array<() => void> = [];
  const scope: ActorScope<ConnectionSnapshot, ConnectionEvent, ConnectionActor['system'], ConnectionFact> = {
    self: actor,
    id: actor.id,
    sessionId: actor.sessionId,
    system: actor.system,
    logger: console.log,
    defer: (effect) => deferred.push(effect),
    emit: (fact) => tellFact(host, fact),
    // Its children stopped with it.
    stopChild: () => {},
    actionExecutor: (action) => {
      // An invoked actor starts after the step, as the actor starts its children.
      if (action.type === 'xstate.spawnChild') deferred.push(() => running.push(invoked(action, actor.system)));
      else action.exec?.(action.info, action.params);
    },
  };
  const step = (from: ConnectionSnapshot, by: ConnectionEvent): ConnectionSnapshot => {
    const next = actor.logic.transition(from, by, scope);
    for (const effect of deferred.splice(0)) effect();
    return next;
  };
  let state = step(snapshot, event);
  while (state.status === 'active' && running.length > 0) state = step(state, await running.shift()!);
}

/** An invoked actor of the stopped connection, run as its host call; resolves with the event its end is. */
function invoked(action: ExecutableActionObject, system: object): Promise<ConnectionEvent> {
  const { id, actorRef } = action.params as { id: string; actorRef: AnyActorRef | undefined };
  const child = actorRef as Actor<AnyActorLogic> | undefined;
  const call = child && hostCallOf(child.logic);
  if (!child || !call) throw new Error(`the '${id}' actor of a stopped connection is not a host call`);
  const input = (child.getSnapshot() as { input: ServerRef }).input;
  // XState's events for an invoked actor's end (`xstate.done.actor.<id>`, `xstate.error.actor.<id>`).
  return call(system, input, NEVER_ABORTED).then(
    (output) => ({ type: `xstate.done.actor.${id}`, output, actorId: id }) as unknown as ConnectionEvent,
    (error: unknown) => ({ type: `xstate.error.actor.${id}`, error, actorId: id }) as unknown as ConnectionEvent,
  );
}
