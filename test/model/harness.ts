/**
 * The test harness the model runner and the scenario tests share: a simulated clock that knows
 * when each scheduled event is due, controllable stand-ins for promise and callback actors, and
 * a recorder actor that plays the parent of the machine under test (it receives `sendParent`).
 */
import {
  createActor,
  fromCallback,
  fromPromise,
  SimulatedClock,
  type AnyActorRef,
  type ActorSystem,
  type AnyEventObject,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type InspectionEvent,
} from 'xstate';

interface ScheduledEntry {
  id: string;
  event: AnyEventObject;
  delay: number;
  source: AnyActorRef;
  target: AnyActorRef;
}

/** A SimulatedClock that remembers the due time of every event the actor system schedules. */
export class TrackingClock extends SimulatedClock {
  private system: ActorSystem<any> | undefined;
  private readonly dueTimes = new WeakMap<object, number>();

  attach(system: ActorSystem<any>): void {
    this.system = system;
  }

  /** Due time of every pending timer, so `set` can walk through them in order. */
  private readonly timers = new Map<number, number>();

  override setTimeout(fn: (...args: any[]) => void, timeout: number): number {
    const id = super.setTimeout(() => {
      this.timers.delete(id);
      fn();
    }, timeout);
    this.timers.set(id, this.now() + timeout);
    // The scheduler records the event just before it asks for the timer: link the new entry.
    for (const entry of this.scheduled()) {
      if (!this.dueTimes.has(entry)) this.dueTimes.set(entry, this.now() + timeout);
    }
    return id;
  }

  override clearTimeout(id: number): void {
    this.timers.delete(id);
    super.clearTimeout(id);
  }

  /**
   * Moves to `time` stopping at every due timer on the way, so what fires sees the clock at its
   * own due time (SimulatedClock alone would jump to `time` first, then fire).
   */
  override set(time: number): void {
    for (;;) {
      const next = Math.min(...this.timers.values());
      if (!(next <= time)) break;
      super.set(Math.max(next, this.now()));
    }
    super.set(time);
  }

  /** Events waiting in the actor system's scheduler. */
  scheduled(): ScheduledEntry[] {
    if (!this.system) return [];
    return Object.values(this.system.getSnapshot()._scheduledEvents);
  }

  dueOf(entry: ScheduledEntry): number {
    const due = this.dueTimes.get(entry);
    if (due === undefined) throw new Error(`no due time known for scheduled ${entry.event.type}`);
    return due;
  }

  advance(ms: number): void {
    this.set(this.now() + ms);
  }
}

export type Outcome = { output: unknown } | { error: unknown };

/** Promise and callback actors the test settles and speaks through, keyed by invoke id (or input.key). */
export class Controls {
  private readonly promises = new Map<string, (outcome: Outcome) => void>();
  private readonly channels = new Map<string, (event: AnyEventObject) => void>();
  /** Every start of a controllable actor, with its input. */
  readonly started: Array<{ key: string; input: unknown }> = [];
  /** Every event a callback actor received, in order. */
  readonly receivedEvents: Array<{ key: string; event: AnyEventObject }> = [];

  /** A promise actor that settles only when the test says so. */
  promise() {
    return fromPromise<any, any>(({ self, input, signal }) => {
      const key = keyOf(self, input);
      this.started.push({ key, input });
      return new Promise((resolve, reject) => {
        const settle = (outcome: Outcome) =>
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the scripted outcome is what the actor rejects with
          'error' in outcome ? reject(outcome.error) : resolve(outcome.output);
        this.promises.set(key, settle);
        signal.addEventListener('abort', () => {
          if (this.promises.get(key) === settle) this.promises.delete(key);
        });
      });
    });
  }

  /** A callback actor whose `sendBack` the test uses to talk to the parent. */
  callback() {
    return fromCallback<AnyEventObject, any>(({ self, input, sendBack, receive }) => {
      const key = keyOf(self, input);
      this.started.push({ key, input });
      this.channels.set(key, sendBack);
      receive((event) => this.receivedEvents.push({ key, event }));
      return () => {
        if (this.channels.get(key) === sendBack) this.channels.delete(key);
      };
    });
  }

  /** A call an action makes (not an actor: the keepalive's probe): `settle(key, …)` ends it through `done`. */
  call(key: string, input: unknown, done: (outcome: Outcome) => void): void {
    this.started.push({ key, input });
    this.promises.set(key, done);
  }

  /**
   * An effect an action starts (not an actor: the listener's stream): recorded like a start, and
   * the test speaks through `send` (to the machine) until `close(key)`.
   */
  open(key: string, input: unknown, send: (event: AnyEventObject) => void): void {
    this.started.push({ key, input });
    this.channels.set(key, send);
  }

  close(key: string): void {
    this.channels.delete(key);
  }

  /** The events the callback actors `key` received (every one started under that key). */
  received(key: string): AnyEventObject[] {
    return this.receivedEvents.filter((r) => r.key === key).map((r) => r.event);
  }

  isRunning(key: string): boolean {
    return this.promises.has(key) || this.channels.has(key);
  }

  settle(key: string, outcome: Outcome): void {
    const settle = this.promises.get(key);
    if (!settle)
      throw new Error(`no running promise actor '${key}' (running: ${[...this.promises.keys()].join(', ') || 'none'})`);
    this.promises.delete(key);
    settle(outcome);
  }

  /** Sends an event to the parent from the running callback actor `key` (or through the open effect `key`). */
  emitFrom(key: string, event: AnyEventObject): void {
    const sendBack = this.channels.get(key);
    if (!sendBack) throw new Error(`no running callback actor '${key}' to send ${event.type}`);
    sendBack(event);
  }
}

function keyOf(self: AnyActorRef, input: unknown): string {
  const key = (input as { key?: unknown } | undefined)?.key;
  return typeof key === 'string' ? key : self.id;
}

export interface Report {
  event: AnyEventObject;
  at: number;
}

export interface Harness {
  clock: TrackingClock;
  controls: Controls;
  /** What the machine under test sent to its parent, with the simulated time. */
  reports: Report[];
  /** Errors the machine under test reported. */
  errors: unknown[];
  /** What the machine under test emitted (`actor.on('*')`), in order. */
  facts: AnyEventObject[];
  actor: AnyActorRef;
  /** Free per-run state for side-effect checks. */
  scratch: Record<string, any>;
  stop(): void;
}

export interface StartOptions {
  machine: AnyStateMachine;
  input: unknown;
  implementations: (h: Harness) => any;
  onMicrostep?: (event: Extract<InspectionEvent, { type: '@xstate.microstep' }>) => void;
  onFact?: (fact: AnyEventObject) => void;
}

/** Lets promise reactions and relayed events settle. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function startHarness(options: StartOptions): Harness {
  const clock = new TrackingClock();
  const controls = new Controls();
  const reports: Report[] = [];
  const h = { clock, controls, reports, errors: [], facts: [], scratch: {} } as unknown as Harness;
  // The recorder is the root: it owns the system (and so the clock and the inspection).
  const recorder = createActor(
    fromCallback<AnyEventObject>(({ receive }) => {
      receive((event) => reports.push({ event, at: clock.now() }));
    }),
    {
      clock,
      inspect: (event) => {
        // By id, not by reference: the initial macrostep (eventless transitions out of the initial
        // state) runs inside createActor, before `h.actor` is assigned.
        if (
          event.type === '@xstate.microstep' &&
          (event.actorRef === h.actor || (h.actor === undefined && (event.actorRef as { id?: string }).id === 'sut'))
        )
          options.onMicrostep?.(event);
      },
    },
  );
  clock.attach(recorder.system);
  recorder.start();
  const logic = options.machine.provide(options.implementations(h));
  h.actor = createActor(logic, { input: options.input, parent: recorder, id: 'sut' });
  h.actor.subscribe({ error: (error: unknown) => h.errors.push(error) });
  // Before start: the facts of the initial state are emitted when the actor starts.
  h.actor.on('*', (fact: AnyEventObject) => {
    h.facts.push(fact);
    options.onFact?.(fact);
  });
  h.stop = () => recorder.stop();
  h.actor.start();
  return h;
}

export function snapshotOf(h: Harness): AnyMachineSnapshot {
  return h.actor.getSnapshot() as AnyMachineSnapshot;
}

/** Reports of one type, optionally only those after index `from`. */
export function reportsOf(h: Harness, type: string, from = 0): Report[] {
  return h.reports.slice(from).filter((r) => r.event.type === type);
}
