/**
 * Transition coverage. `machine.provide()` builds new StateNode objects, so a transition is
 * identified by its source state id, event descriptor, position among the transitions for that
 * descriptor, targets and guard — the same for the original and every provided machine.
 */
import { getStateNodes } from 'xstate/graph';
import type { AnyStateMachine, AnyTransitionDefinition } from 'xstate';

function guardName(guard: unknown): string | undefined {
  if (guard === undefined) return undefined;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') return guard.name || '(inline guard)';
  const type = (guard as { type?: unknown }).type;
  return typeof type === 'string' ? type : '(guard)';
}

export function transitionKey(transition: AnyTransitionDefinition): string {
  const { source, eventType } = transition;
  const siblings = eventType === '' ? (source.always ?? []) : (source.transitions.get(eventType) ?? []);
  const index = siblings.indexOf(transition);
  const targets = transition.target?.map((node) => `#${node.id}`).join(', ') ?? '(stays)';
  const guard = guardName(transition.guard);
  return `#${source.id} --${eventType === '' ? '(always)' : eventType}[${index}]--> ${targets}${guard ? ` if '${guard}'` : ''}`;
}

/** Every transition of the machine: `on`, invoke done/error, `after`, and `always`. */
export function allTransitions(machine: AnyStateMachine): AnyTransitionDefinition[] {
  return [machine.root, ...getStateNodes(machine.root)].flatMap((node) => [
    ...[...node.transitions.values()].flat(),
    ...(node.always ?? []),
  ]);
}

export function allTransitionKeys(machine: AnyStateMachine): string[] {
  return allTransitions(machine).map(transitionKey);
}

/** Collects the keys of taken transitions across many replays of one machine. */
export class Coverage {
  readonly taken = new Set<string>();
  /** The kinds of the facts the machine emitted (`actor.on('*')`) across the replays. */
  readonly facts = new Set<string>();

  constructor(readonly machine: AnyStateMachine) {}

  record(transitions: readonly AnyTransitionDefinition[]): void {
    for (const transition of transitions) this.taken.add(transitionKey(transition));
  }

  untaken(): string[] {
    return allTransitionKeys(this.machine).filter((key) => !this.taken.has(key));
  }

  summary(): { covered: number; total: number } {
    const all = allTransitionKeys(this.machine);
    return { covered: all.filter((key) => this.taken.has(key)).length, total: all.length };
  }
}
