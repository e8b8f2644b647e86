/**
 * Model-based testing for machines with `invoke` and `after` (which `createTestModel` refuses).
 *
 * 1. `transitionPaths`: explore the machine with `xstate/graph` (`getAdjacencyMap`,
 *    `getShortestPaths`) using explicit events — external ones, synthetic actor events
 *    (`xstate.done.actor.<id>`, `xstate.error.actor.<id>`) and delayed ones
 *    (`xstate.after.<delay>.<state id>`) — then build, for every (state, event) edge, the
 *    shortest path to the state plus that event; dedupe paths that are prefixes of others.
 * 2. `replay`: run a path on a real actor with controllable child actors and a SimulatedClock.
 *    Actor events settle the controllable child, delayed events advance the clock to the due
 *    time of the scheduled event (after checking that nothing happens 1 ms earlier), events
 *    that children send are sent by the running child stub, the rest is `actor.send`.
 *    After every step the projected snapshot must equal the model's.
 */
import { expect } from 'vitest';
import { getAdjacencyMap, getShortestPaths, getStateNodes, type AdjacencyMap } from 'xstate/graph';
import { createActor, fromCallback, type AnyEventObject, type AnyMachineSnapshot, type AnyStateMachine } from 'xstate';
import { type Coverage } from './coverage.js';
import { Controls, flush, snapshotOf, startHarness, type Harness } from './harness.js';

export interface StepContext {
  h: Harness;
  event: AnyEventObject;
  before: AnyMachineSnapshot;
  after: AnyMachineSnapshot;
  /** Index in `h.reports` where this step's reports begin. */
  reportsFrom: number;
}

export interface ModelSpec {
  machine: AnyStateMachine;
  input: unknown;
  /** Stub actors (and actions) for `machine.provide()`, bound to one run's harness. */
  implementations: (h: Harness) => any;
  /** The events the model may take in a snapshot; only ones the real system can produce there. */
  events: (snapshot: AnyMachineSnapshot) => AnyEventObject[];
  /** The state value plus the context fields that identify a model state and are asserted. */
  project: (snapshot: AnyMachineSnapshot) => unknown;
  /** Event types the machine receives from a child: event type -> child key in Controls. */
  viaChild?: Record<string, string>;
  /** Event types (besides `xstate.after.*`) that only the clock may deliver. */
  timed?: string[];
  /** Custom ways to produce an event; return true when handled. */
  drive?: (event: AnyEventObject, h: Harness) => boolean | Promise<boolean>;
  /**
   * The scheduled event a model event stands for: a model may tell one delayed event apart by
   * the evidence a provided guard reads (`drive` sets that evidence, then the clock delivers it).
   */
  scheduledAs?: (event: AnyEventObject) => AnyEventObject;
  /** Side-effect assertions after every step. */
  afterStep?: (step: StepContext) => void;
}

export interface ModelStep {
  event: AnyEventObject;
  state: AnyMachineSnapshot;
}

export interface ModelPath {
  name: string;
  steps: ModelStep[];
}

/** A short, stable text for an event: errors by message, objects as JSON. */
export function describeEvent(event: AnyEventObject): string {
  const { type, ...rest } = event;
  const fields = Object.entries(rest).map(([key, value]) => {
    if (value instanceof Error)
      return `${key}=Error(${value.message}${'code' in value ? `, ${String(value.code)}` : ''})`;
    return `${key}=${JSON.stringify(value)}`;
  });
  return fields.length ? `${type}(${fields.join(', ')})` : type;
}

/** A readable test title for an event: like `describeEvent`, with long values shortened. */
export function labelEvent(event: AnyEventObject): string {
  const { type, ...rest } = event;
  const fields = Object.entries(rest).map(([key, value]) => {
    const text = value instanceof Error ? `Error(${value.message})` : JSON.stringify(value);
    return `${key}=${text !== undefined && text.length > 40 ? `${text.slice(0, 37)}…` : text}`;
  });
  return fields.length ? `${type}(${fields.join(', ')})` : type;
}

function traversalOptions(spec: ModelSpec) {
  return {
    input: spec.input,
    // A model whose projection grows without bound fails loudly instead of exploring forever.
    limit: 20_000,
    events: (snapshot: AnyMachineSnapshot) => spec.events(snapshot),
    serializeState: (snapshot: AnyMachineSnapshot) => JSON.stringify(spec.project(snapshot)),
    serializeEvent: (event: AnyEventObject) => describeEvent(event),
  } as any;
}

/**
 * The graph's mock actor scope has no parent, so `sendParent` would throw while exploring.
 * Give the traversal a scope whose `self` has a parent that ignores everything. The scope's one
 * actor system is shared by every explored branch, so a child spawned with the same systemId in
 * two branches (a server added, removed and added again) must not collide there either.
 */
function withQuietParent(logic: AnyStateMachine): AnyStateMachine {
  const parent = createActor(fromCallback(() => {}));
  const patched = new WeakMap<object, any>();
  const scoped = (scope: any) => {
    if (!patched.has(scope)) {
      const system = Object.assign(Object.create(scope.system), {
        _set: (systemId: string, actor: unknown) => {
          scope.system._unregister?.(scope.system.get(systemId) ?? actor);
          scope.system._set(systemId, actor);
        },
      });
      const self = Object.assign(Object.create(scope.self), { _parent: parent, system });
      patched.set(scope, { ...scope, self, system });
    }
    return patched.get(scope);
  };
  const graphLogic = Object.create(logic);
  graphLogic.transition = (snapshot: unknown, event: unknown, scope: unknown) =>
    logic.transition(snapshot as any, event as any, scoped(scope));
  graphLogic.getInitialSnapshot = (scope: unknown, input: unknown) => logic.getInitialSnapshot(scoped(scope), input);
  return graphLogic;
}

/** Paths that together take every edge of the model's adjacency map. */
export function transitionPaths(spec: ModelSpec, keep: (steps: ModelStep[]) => boolean = () => true): ModelPath[] {
  // The graph needs actor logic for invoked/spawned children; the stubs are never started here.
  const logic = withQuietParent(spec.machine.provide(spec.implementations({ controls: new Controls() } as Harness)));
  const options = traversalOptions(spec);
  const adjacency: AdjacencyMap<AnyMachineSnapshot, AnyEventObject> = getAdjacencyMap(logic, options);
  const shortest = new Map<string, ModelStep[]>();
  for (const path of getShortestPaths(logic, options)) {
    shortest.set(options.serializeState(path.state), path.steps as ModelStep[]);
  }
  const candidates: ModelStep[][] = [];
  for (const [key, { transitions }] of Object.entries(adjacency)) {
    const head = shortest.get(key);
    // `keep`: a subset of the paths (filtered before the prefixes are deduplicated).
    if (!head) throw new Error(`no shortest path to model state ${key}`);
    if (keep(head)) candidates.push(head);
    const next: Array<{ event: AnyEventObject; state: AnyMachineSnapshot }> = Object.values(transitions);
    for (const { event, state } of next) {
      const steps = [...head, { event, state }];
      if (keep(steps)) candidates.push(steps);
    }
  }
  return dedupe(candidates).map((steps) => ({
    name:
      steps
        .slice(1)
        .map((step) => labelEvent(step.event))
        .join(' → ') || '(initial state)',
    steps,
  }));
}

/** Drops paths whose event sequence is a prefix of (or equal to) another kept path. */
function dedupe(paths: ModelStep[][]): ModelStep[][] {
  const sequences = paths.map((steps) => ({ steps, events: steps.slice(1).map((s) => describeEvent(s.event)) }));
  sequences.sort((a, b) => b.events.length - a.events.length);
  const kept: typeof sequences = [];
  for (const candidate of sequences) {
    const covered = kept.some((path) => candidate.events.every((event, i) => path.events[i] === event));
    if (!covered) kept.push(candidate);
  }
  return kept.map((path) => path.steps);
}

/** The delay name behind an `xstate.after.*` event type, from the machine's own transitions. */
function delayNameOf(machine: AnyStateMachine, eventType: string): string | number | undefined {
  for (const node of [machine.root, ...getStateNodes(machine.root)]) {
    for (const transition of node.after) {
      if (transition.eventType === eventType && typeof transition.delay !== 'function') return transition.delay;
    }
  }
  return undefined;
}

function expectedDelay(machine: AnyStateMachine, eventType: string, snapshot: AnyMachineSnapshot): number | undefined {
  const name = delayNameOf(machine, eventType);
  if (typeof name === 'number') return name;
  if (name === undefined) return undefined;
  const delay = (machine.implementations.delays as Record<string, unknown>)[name];
  if (typeof delay === 'number') return delay;
  if (typeof delay !== 'function') throw new Error(`delay '${name}' has no implementation`);
  return delay({ context: snapshot.context, event: { type: eventType } }, undefined) as number;
}

function matches(scheduled: AnyEventObject, wanted: AnyEventObject): boolean {
  return Object.entries(wanted).every(
    ([key, value]) => Object.is(scheduled[key], value) || JSON.stringify(scheduled[key]) === JSON.stringify(value),
  );
}

/** Delivers a scheduled event by advancing the clock to its due time; false if none is pending. */
async function deliverScheduled(spec: ModelSpec, h: Harness, event: AnyEventObject): Promise<boolean> {
  const pending = h.clock
    .scheduled()
    .filter((entry) => entry.target === h.actor && matches(entry.event, event))
    .sort((a, b) => h.clock.dueOf(a) - h.clock.dueOf(b));
  const entry = pending[0];
  if (!entry) return false;
  const before = snapshotOf(h);
  const wanted = expectedDelay(spec.machine, event.type, before);
  if (wanted !== undefined)
    expect(entry.delay, `${event.type}: scheduled delay vs machine.implementations.delays`).toBe(wanted);
  const due = h.clock.dueOf(entry);
  if (due > h.clock.now()) {
    h.clock.set(due - 1);
    await flush();
    expect(h.clock.scheduled(), `${event.type} must not fire 1 ms before it is due`).toContain(entry);
    expect(spec.project(snapshotOf(h)), `${event.type}: nothing may change 1 ms before it is due`).toEqual(
      spec.project(before),
    );
  }
  h.clock.set(due);
  return true;
}

async function realize(spec: ModelSpec, h: Harness, event: AnyEventObject): Promise<void> {
  if (await spec.drive?.(event, h)) return;
  if (await deliverScheduled(spec, h, spec.scheduledAs?.(event) ?? event)) return;
  if (event.type.startsWith('xstate.after.') || spec.timed?.includes(event.type)) {
    throw new Error(`the model took ${describeEvent(event)} but no such event is scheduled`);
  }
  const actorEvent = /^xstate\.(done|error)\.actor\.(.+)$/.exec(event.type);
  if (actorEvent) {
    h.controls.settle(actorEvent[2]!, actorEvent[1] === 'done' ? { output: event.output } : { error: event.error });
    return;
  }
  // Through the child when it is running (a keepalive's CONNECTION_LOST); else from the runtime, directly.
  const child = spec.viaChild?.[event.type];
  if (child !== undefined && h.controls.isRunning(child)) {
    h.controls.emitFrom(child, event);
    return;
  }
  h.actor.send(event);
}

function expectStep(spec: ModelSpec, h: Harness, expected: AnyMachineSnapshot, where: string): void {
  const actual = snapshotOf(h);
  expect(h.errors, `${where}: actor errors`).toEqual([]);
  expect(actual.status, `${where}: status`).toBe(expected.status);
  expect(actual.value, `${where}: state value`).toEqual(expected.value);
  expect(spec.project(actual), `${where}: projected snapshot`).toEqual(spec.project(expected));
}

export function startModel(spec: ModelSpec, coverage?: Coverage): Harness {
  return startHarness({
    machine: spec.machine,
    input: spec.input,
    implementations: spec.implementations,
    onMicrostep: (event) => coverage?.record(event._transitions),
    onFact: (fact) => coverage?.facts.add(fact.type),
  });
}

/** Replays one model path on a real actor, asserting the state after every step. */
export async function replay(spec: ModelSpec, path: ModelPath, coverage: Coverage): Promise<void> {
  const h = startModel(spec, coverage);
  try {
    await flush();
    expectStep(spec, h, path.steps[0]!.state, 'initial state');
    for (const [index, step] of path.steps.entries()) {
      if (index === 0) continue;
      const before = snapshotOf(h);
      const reportsFrom = h.reports.length;
      await realize(spec, h, step.event);
      await flush();
      const where = `step ${index} (${describeEvent(step.event)})`;
      expectStep(spec, h, step.state, where);
      spec.afterStep?.({ h, event: step.event, before, after: snapshotOf(h), reportsFrom });
    }
  } finally {
    h.stop();
  }
}
