/**
 * Mermaid `stateDiagram-v2` text generated from a machine definition, so the diagrams in
 * docs/machines/ can never drift from the code (a test regenerates and compares them).
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';

interface Transition {
  eventType: string;
  target?: readonly AnyStateNode[] | undefined;
  guard?: string | { type?: string } | undefined;
  actions?: readonly unknown[] | undefined;
}

export function toMermaid(machine: AnyStateMachine): string {
  const lines = ['stateDiagram-v2'];
  renderChildren(machine.root, lines, '  ');
  // Transitions declared on the machine itself apply in every state.
  const global = transitionsOf(machine.root).filter((t) => t.target?.length);
  if (global.length) {
    lines.push('  state "(any state)" as any_state');
    for (const transition of global) {
      for (const target of transition.target!) lines.push(`  any_state --> ${nodeId(target)}: ${label(transition)}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function nodeId(node: AnyStateNode): string {
  return node.path.map((part) => part.replace(/[^A-Za-z0-9]+/g, '_')).join('__');
}

function renderChildren(parent: AnyStateNode, lines: string[], indent: string): void {
  const children = Object.values(parent.states) as AnyStateNode[];
  for (const child of children) {
    const id = nodeId(child);
    lines.push(`${indent}state "${child.key}" as ${id}`);
    const entry = actionNames(child.entry);
    if (entry.length) lines.push(`${indent}${id} : entry / ${entry.join(', ')}`);
    const exit = actionNames(child.exit);
    if (exit.length) lines.push(`${indent}${id} : exit / ${exit.join(', ')}`);
    for (const invoke of child.invoke) lines.push(`${indent}${id} : invoke ${invoke.id}`);
    if (Object.keys(child.states).length > 0) {
      lines.push(`${indent}state ${id} {`);
      renderChildren(child, lines, `${indent}  `);
      lines.push(`${indent}}`);
    }
  }
  const initial = parent.initial?.target?.[0] as AnyStateNode | undefined;
  if (initial) lines.push(`${indent}[*] --> ${nodeId(initial)}`);
  for (const child of children) {
    for (const transition of transitionsOf(child)) {
      const targets = transition.target?.length ? transition.target : [child];
      for (const target of targets) lines.push(`${indent}${nodeId(child)} --> ${nodeId(target)}: ${label(transition)}`);
    }
    if (child.type === 'final') lines.push(`${indent}${nodeId(child)} --> [*]`);
  }
}

function transitionsOf(node: AnyStateNode): Transition[] {
  const all: Transition[] = [];
  for (const list of node.transitions.values()) all.push(...(list as Transition[]));
  all.push(...((node.always ?? []) as Transition[]));
  // Targetless transitions (actions only) are drawn as self-loops: events, and timers that act.
  return all.filter(
    (t) =>
      t.target?.length ||
      !t.eventType.startsWith('xstate.') ||
      (t.eventType.startsWith('xstate.after.') && actionNames(t.actions).length > 0),
  );
}

/** What the machine only says (machines/connection.facts.ts): every move has them, a diagram shows what it does. */
const SAYING = new Set(['announce', 'note cause']);

/** Named actions (strings or `{ type }`); inline functions have no name to show; a fact told is named by its kind. */
function actionNames(actions: readonly unknown[] | undefined): string[] {
  const names: string[] = [];
  for (const action of actions ?? []) {
    if (typeof action === 'string') names.push(action);
    else if (typeof action === 'object' && action !== null && typeof (action as { type?: unknown }).type === 'string') {
      const { type, params } = action as { type: string; params?: { type?: unknown } };
      if (SAYING.has(type)) continue;
      names.push(type === 'tell' && typeof params?.type === 'string' ? `tell ${params.type}` : type);
    }
  }
  return names;
}

function label(transition: Transition): string {
  const name = typeof transition.guard === 'string' ? transition.guard : transition.guard?.type;
  const guard = name ? ` [${name}]` : '';
  // A self-loop is there for what it does: show its actions.
  const actions = transition.target?.length ? [] : actionNames(transition.actions);
  return `${describeEvent(transition.eventType)}${guard}${actions.length ? ` / ${actions.join(', ')}` : ''}`;
}

function describeEvent(type: string): string {
  if (type === '') return 'always';
  if (type.startsWith('xstate.done.actor.')) return `done ${type.slice('xstate.done.actor.'.length)}`;
  if (type.startsWith('xstate.error.actor.')) return `error ${type.slice('xstate.error.actor.'.length)}`;
  const after = /^xstate\.after\.(.+)\.[^.]+(\.[^.]+)*$/.exec(type);
  if (after) return `after ${type.slice('xstate.after.'.length).split('.')[0]}`;
  return type;
}

/** Replaces each `<!-- diagram:NAME:start -->…<!-- diagram:NAME:end -->` block with NAME's diagram. */
export function embedDiagrams(markdown: string, machines: Record<string, AnyStateMachine>): string {
  return markdown.replace(/<!-- diagram:([\w-]+):start -->[\s\S]*?<!-- diagram:\1:end -->/g, (block, name: string) => {
    const machine = machines[name];
    if (!machine) return block;
    return `<!-- diagram:${name}:start -->\n\`\`\`mermaid\n${toMermaid(machine)}\`\`\`\n<!-- diagram:${name}:end -->`;
  });
}
