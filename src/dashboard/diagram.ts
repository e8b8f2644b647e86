/**
 * A machine's diagram as SVG, drawn from its definition (the same state nodes the Mermaid
 * diagrams of `npm run diagrams` come from), so it cannot drift from the code and needs nothing
 * from the network. Each state is a box (compound states hold their children), laid out in
 * columns by how far it is from the initial state; transitions are arrows whose tooltip names
 * their events. Every box carries `data-state="<path>"` (`ready.serving`): the page lights the
 * boxes of the current state by that attribute.
 */
import type { AnyStateMachine, AnyStateNode } from 'xstate';

interface Box {
  node: AnyStateNode;
  path: string;
  x: number;
  y: number;
  width: number;
  height: number;
  children: Box[];
}

const LEAF_HEIGHT = 28;
const TITLE_HEIGHT = 22;
const PAD = 10;
const COLUMN_GAP = 44;
const ROW_GAP = 14;
const CHAR_WIDTH = 7;

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function childrenOf(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states) as AnyStateNode[];
}

interface Transition {
  eventType: string;
  target?: readonly AnyStateNode[] | undefined;
}

function transitionsOf(node: AnyStateNode): Transition[] {
  const all: Transition[] = [];
  for (const list of node.transitions.values()) all.push(...(list as Transition[]));
  all.push(...((node.always ?? []) as Transition[]));
  return all;
}

/** The child of `parent` that is `node` or holds it. */
function childHolding(parent: AnyStateNode, node: AnyStateNode): AnyStateNode | undefined {
  if (node.path.length <= parent.path.length) return undefined;
  if (parent.path.some((part, index) => node.path[index] !== part)) return undefined;
  return parent.states[node.path[parent.path.length]!] as AnyStateNode | undefined;
}

/** Every transition leaving `node` or a state inside it. */
function transitionsWithin(node: AnyStateNode): Transition[] {
  return [...transitionsOf(node), ...childrenOf(node).flatMap(transitionsWithin)];
}

/** Columns of the children: breadth first from the initial child over the transitions among them. */
function columnsOf(parent: AnyStateNode): AnyStateNode[][] {
  const children = childrenOf(parent);
  const rank = new Map<AnyStateNode, number>();
  const initial = parent.initial?.target?.[0] as AnyStateNode | undefined;
  const queue: AnyStateNode[] = [];
  const first = initial ? childHolding(parent, initial) : children[0];
  if (first) {
    rank.set(first, 0);
    queue.push(first);
  }
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const transition of transitionsWithin(node)) {
      for (const target of transition.target ?? []) {
        const sibling = childHolding(parent, target);
        if (sibling && !rank.has(sibling)) {
          rank.set(sibling, rank.get(node)! + 1);
          queue.push(sibling);
        }
      }
    }
  }
  let last = Math.max(-1, ...rank.values());
  for (const child of children) if (!rank.has(child)) rank.set(child, ++last);
  const columns: AnyStateNode[][] = [];
  for (const child of children) (columns[rank.get(child)!] ??= []).push(child);
  return columns.filter((column) => column.length > 0);
}

/**
 * Sizes and places a node's box (children relative to the node; made absolute by `place`). The
 * machine's own states flow top to bottom, one row per step from the initial state; the children
 * of a compound state flow left to right: the diagram stays about as wide as it is high.
 */
function measure(node: AnyStateNode): Box {
  const path = node.path.join('.');
  const children = childrenOf(node);
  const titleWidth = node.key.length * CHAR_WIDTH + 2 * PAD;
  if (children.length === 0)
    return { node, path, x: 0, y: 0, width: Math.max(84, titleWidth), height: LEAF_HEIGHT, children: [] };
  const ranks = columnsOf(node).map((rank) => rank.map(measure));
  const downward = node.path.length === 0;
  // Along: the direction of flow; across: the boxes of one rank side by side.
  const along = (box: Box) => (downward ? box.height : box.width);
  const across = (box: Box) => (downward ? box.width : box.height);
  const gapAlong = downward ? ROW_GAP * 2 : COLUMN_GAP;
  const gapAcross = downward ? COLUMN_GAP / 2 : ROW_GAP;
  const thickness = ranks.map((rank) => Math.max(...rank.map(along)));
  const spans = ranks.map((rank) => rank.reduce((sum, box) => sum + across(box), 0) + gapAcross * (rank.length - 1));
  const span = Math.max(...spans);
  let at = 0;
  ranks.forEach((rank, index) => {
    let offset = (span - spans[index]!) / 2;
    for (const box of rank) {
      const centred = at + (thickness[index]! - along(box)) / 2;
      if (downward) [box.x, box.y] = [PAD + offset, TITLE_HEIGHT + centred];
      else [box.x, box.y] = [PAD + centred, TITLE_HEIGHT + offset];
      offset += across(box) + gapAcross;
    }
    at += thickness[index]! + gapAlong;
  });
  const length = at - gapAlong;
  const [innerWidth, innerHeight] = downward ? [span, length] : [length, span];
  return {
    node,
    path,
    x: 0,
    y: 0,
    width: Math.max(titleWidth, innerWidth + 2 * PAD),
    height: TITLE_HEIGHT + innerHeight + PAD,
    children: ranks.flat(),
  };
}

function place(box: Box, dx: number, dy: number, all: Map<AnyStateNode, Box>): void {
  box.x += dx;
  box.y += dy;
  all.set(box.node, box);
  for (const child of box.children) place(child, box.x, box.y, all);
}

/** Where the line from a box's centre towards `to` leaves the box. */
function border(box: Box, toX: number, toY: number): [number, number] {
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const dx = toX - cx;
  const dy = toY - cy;
  if (dx === 0 && dy === 0) return [cx, cy];
  const scale = Math.min(box.width / 2 / Math.abs(dx || 1e-9), box.height / 2 / Math.abs(dy || 1e-9));
  return [cx + dx * scale, cy + dy * scale];
}

function edge(from: Box, to: Box, events: string[]): string {
  const [x1, y1] = border(from, to.x + to.width / 2, to.y + to.height / 2);
  const [x2, y2] = border(to, from.x + from.width / 2, from.y + from.height / 2);
  // Bent to one side, so that the two directions between a pair stay apart.
  const length = Math.hypot(x2 - x1, y2 - y1) || 1;
  const bend = Math.min(30, length / 4);
  const mx = (x1 + x2) / 2 + ((y2 - y1) / length) * bend;
  const my = (y1 + y2) / 2 - ((x2 - x1) / length) * bend;
  const d = `M${x1.toFixed(1)},${y1.toFixed(1)} Q${mx.toFixed(1)},${my.toFixed(1)} ${x2.toFixed(1)},${y2.toFixed(1)}`;
  // `data-from`, `data-to`, `data-events`: the page lists the current state's exits from them.
  return `<path class="edge" d="${d}" marker-end="url(#arrow)" data-from="${escape(from.path)}" data-to="${escape(to.path)}" data-events="${escape(events.join(', '))}"><title>${escape(events.join(', '))}</title></path>`;
}

function describeEvent(type: string): string {
  if (type === '') return 'always';
  if (type.startsWith('xstate.done.actor.')) return `done ${type.slice('xstate.done.actor.'.length)}`;
  if (type.startsWith('xstate.error.actor.')) return `error ${type.slice('xstate.error.actor.'.length)}`;
  if (type.startsWith('xstate.after.')) return `after ${type.slice('xstate.after.'.length).split('.')[0]}`;
  return type;
}

/** Compound states first (their frames), or leaves only (drawn over the arrows). */
function drawBox(box: Box, out: string[], compounds: boolean): void {
  const compound = box.children.length > 0;
  if (compound !== compounds) {
    for (const child of box.children) drawBox(child, out, compounds);
    return;
  }
  const type = box.node.type === 'final' ? ' final' : '';
  out.push(
    `<g class="state${compound ? ' compound' : ''}${type}" data-state="${escape(box.path)}">`,
    `<rect x="${box.x}" y="${box.y}" width="${box.width}" height="${box.height}" rx="6"/>`,
    compound
      ? `<text x="${box.x + PAD}" y="${box.y + 15}">${escape(box.node.key)}</text>`
      : `<text x="${box.x + box.width / 2}" y="${box.y + box.height / 2 + 4}" text-anchor="middle">${escape(box.node.key)}</text>`,
    '</g>',
  );
  for (const child of box.children) drawBox(child, out, compounds);
}

/** The machine's diagram: an `<svg>` element with a `data-machine` attribute. */
export function machineSvg(name: string, machine: AnyStateMachine): string {
  const root = measure(machine.root);
  const boxes = new Map<AnyStateNode, Box>();
  // The root's own box is the frame; its children are what is drawn.
  place(root, 0, -TITLE_HEIGHT + PAD, boxes);
  const edges = new Map<string, { from: Box; to: Box; events: Set<string> }>();
  for (const [node, from] of boxes) {
    if (node === machine.root) continue;
    for (const transition of transitionsOf(node)) {
      for (const target of transition.target ?? []) {
        const to = boxes.get(target);
        if (!to || to === from) continue;
        const key = `${from.path}→${to.path}`;
        const known = edges.get(key) ?? { from, to, events: new Set<string>() };
        known.events.add(describeEvent(transition.eventType));
        edges.set(key, known);
      }
    }
  }
  const out: string[] = [];
  // The machine's own transitions (`close`, `reconnect` from any state): not drawn, listed by the page with each state's exits.
  for (const transition of transitionsOf(machine.root))
    for (const target of transition.target ?? []) {
      const to = boxes.get(target);
      if (to && to.node !== machine.root)
        out.push(
          `<desc class="anywhere" data-to="${escape(to.path)}" data-events="${escape(describeEvent(transition.eventType))}"></desc>`,
        );
    }
  for (const child of root.children) drawBox(child, out, true);
  for (const { from, to, events } of edges.values()) out.push(edge(from, to, [...events]));
  for (const child of root.children) drawBox(child, out, false);
  const width = Math.ceil(root.width);
  const height = Math.ceil(root.height - TITLE_HEIGHT + PAD);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" class="machine" data-machine="${escape(name)}" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>',
    ...out,
    '</svg>',
  ].join('');
}
