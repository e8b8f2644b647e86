/**
 * The dashboard's live model: rows, timelines and calls, fed by the supervisor's typed events
 * (`transition`, `call`) and pushed to every open stream. Transitions are always kept (a few per
 * server, they are rare) so a page opened later has a timeline. Everything else runs only while a
 * browser is connected: the `call` subscription (so requests pay nothing otherwise) and a sampler
 * that sends the rows that changed (counters, nested states, children's states); a server that
 * moved has its row sent within 50 ms.
 *
 * What it costs stays flat as the fleet and the traffic grow: a call is one slot written in a ring
 * (its entry is built only if it is still among the last ones when the batch goes out, every
 * 250 ms), each frame is serialized once for every page, and a full sample reads at most
 * `ROWS_PER_SECOND` statuses a second on average (a fleet of 1,000 is sampled every 4 s: its
 * counters are that old at most, its moves are not).
 */
import type { CallEvent } from '../observe/calls.js';
import type { TransitionEvent } from '../runtime/context/events.js';
import { frame, type EventStream } from './event-stream.js';
import { rowOf, type Row, type Seen, type StatusView } from './rows.js';

interface DashboardEvents {
  transition: TransitionEvent;
  call: CallEvent;
}

/** What the dashboard needs of a supervisor (the Supervisor has each member). */
export interface DashboardSource {
  status(): Record<string, StatusView>;
  /** One server's handle (throws for a disabled or unknown one). */
  server(name: string): { status(): StatusView };
  on<K extends keyof DashboardEvents>(event: K, listener: (payload: DashboardEvents[K]) => void): () => void;
  reconnectServer(name: string): Promise<void>;
  enable(name: string): unknown;
  disable(name: string): Promise<void>;
}

export interface TimelineEntry {
  from: string | null;
  to: string;
  cause: string;
  error: string | undefined;
  at: number;
}

/** A call as the page shows it: the call event, its params and result as text only when opted in. */
export interface CallEntry extends Omit<CallEvent, 'params' | 'result' | 'error'> {
  error: string | undefined;
  args?: string | undefined;
  result?: string | undefined;
}

export interface FeedOptions {
  /** Show calls' arguments and results (default false). */
  payloads: boolean;
  sampleMs: number;
}

const TIMELINE_LENGTH = 50;
/** The recent calls a page starts from. */
const CALLS_KEPT = 200;
/** Calls go out in batches (one frame per batch, not per call), the last this many of each batch: a page lists 200 a second at most, and is told how many it was not sent. */
const CALLS_PER_BATCH = 50;
const CALL_BATCH_MS = 250;
/** A full sample reads every status: a large fleet is sampled less often, so this many a second at most. */
const ROWS_PER_SECOND = 250;
const PAYLOAD_CHARS = 2_000;
/** After a transition the rows are sampled at once, but not more often than this. */
const SOON_MS = 50;
/** Transitions go out with the rows that moved, at most this many a frame (a page fetches a timeline whole when it opens one). */
const TRANSITIONS_PER_FRAME = 500;

function clip(text: string | undefined, limit = 500): string | undefined {
  return text !== undefined && text.length > limit ? `${text.slice(0, limit)}…` : text;
}

function payload(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  try {
    return clip(JSON.stringify(value), PAYLOAD_CHARS);
  } catch {
    return '(not JSON)';
  }
}

export class Feed {
  private readonly streams = new Set<EventStream>();
  private readonly seen = new Map<string, Seen>();
  private readonly timelines = new Map<string, TimelineEntry[]>();
  private calls: CallEntry[] = [];
  /** The calls of the batch under way, the newest `CALLS_PER_BATCH` of them: a ring, written in place. */
  private readonly ring: (CallEvent | undefined)[] = new Array<CallEvent | undefined>(CALLS_PER_BATCH).fill(undefined);
  private ringNext = 0;
  /** Calls since the last batch went out (those beyond the ring's length are dropped). */
  private batchCount = 0;
  /** Samples taken, and how many there are to a full sample (1 for a fleet of up to `ROWS_PER_SECOND`). */
  private ticks = 0;
  private ticksPerSample = 1;
  /** The JSON of each row as last sent, to send only what changed. */
  private readonly sent = new Map<string, string>();
  private readonly offTransition: () => void;
  private offCalls: (() => void) | undefined;
  private sampler: NodeJS.Timeout | undefined;
  private soon: NodeJS.Timeout | undefined;
  /** Servers that moved since the last sample: sent first, alone. */
  private readonly moved = new Set<string>();
  /** Their transitions, sent with their rows: one frame for a fleet that moves at once, not one per move. */
  private transitions: (TimelineEntry & { server: string })[] = [];
  private batchTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly source: DashboardSource,
    private readonly options: FeedOptions,
  ) {
    this.offTransition = source.on('transition', (event) => this.onTransition(event));
  }

  get watchers(): number {
    return this.streams.size;
  }

  attach(stream: EventStream): void {
    this.streams.add(stream);
    if (this.streams.size > 1) return;
    this.offCalls = this.source.on('call', (call) => this.onCall(call));
    this.sampler = setInterval(() => this.tick(), this.options.sampleMs);
    this.sampler.unref();
  }

  detach(stream: EventStream): void {
    if (!this.streams.delete(stream) || this.streams.size > 0) return;
    this.offCalls?.();
    this.offCalls = undefined;
    clearInterval(this.sampler);
    clearTimeout(this.soon);
    clearTimeout(this.batchTimer);
    this.sampler = this.soon = this.batchTimer = undefined;
    this.ring.fill(undefined);
    this.batchCount = 0;
    this.sent.clear();
    this.moved.clear();
    this.transitions = [];
  }

  close(): void {
    for (const stream of [...this.streams]) {
      this.detach(stream);
      stream.end();
    }
    this.offTransition();
  }

  /** Every row now, the recent calls, and the time: what a page starts from. */
  snapshot(): { rows: Row[]; calls: CallEntry[]; now: number; payloads: boolean } {
    const now = Date.now();
    const rows: Row[] = [];
    for (const [name, status] of Object.entries(this.source.status())) {
      const row = this.row(name, status, now);
      this.sent.set(name, JSON.stringify(row));
      rows.push(row);
    }
    this.forgetMissing(new Set(rows.map((row) => row.name)));
    this.pace(rows.length);
    return { rows, calls: this.calls, now, payloads: this.options.payloads };
  }

  snapshotFrame(): string {
    return frame('snapshot', this.snapshot());
  }

  /** One server's row and timeline (the page's selected server); undefined for an unknown name. */
  server(name: string): { row: Row; timeline: TimelineEntry[] } | undefined {
    const status = this.source.status()[name];
    if (!status) return undefined;
    return { row: this.row(name, status, Date.now()), timeline: this.timelines.get(name) ?? [] };
  }

  private row(name: string, status: StatusView, now: number): Row {
    let seen = this.seen.get(name);
    if (!seen) this.seen.set(name, (seen = {}));
    return rowOf(name, status, seen, now);
  }

  private broadcast(chunk: string): void {
    for (const stream of this.streams) stream.send(chunk);
  }

  private onTransition(event: TransitionEvent): void {
    let seen = this.seen.get(event.server);
    if (!seen) this.seen.set(event.server, (seen = {}));
    seen.since = event.at;
    const error = clip(event.error);
    if (error !== undefined) {
      seen.error = error;
      seen.errorAt = event.at;
    }
    seen.known = true;
    const entry: TimelineEntry = { from: event.from, to: event.to, cause: event.cause, error, at: event.at };
    let timeline = this.timelines.get(event.server);
    if (!timeline) this.timelines.set(event.server, (timeline = []));
    timeline.push(entry);
    if (timeline.length > TIMELINE_LENGTH) timeline.splice(0, timeline.length - TIMELINE_LENGTH);
    if (this.streams.size === 0) return;
    if (this.transitions.length === TRANSITIONS_PER_FRAME) this.transitions.shift();
    this.transitions.push({ server: event.server, ...entry });
    this.moved.add(event.server);
    this.soon ??= setTimeout(() => this.sampleMoved(), SOON_MS);
  }

  private onCall(call: CallEvent): void {
    this.ring[this.ringNext] = call;
    this.ringNext = this.ringNext + 1 === CALLS_PER_BATCH ? 0 : this.ringNext + 1;
    this.batchCount++;
    this.batchTimer ??= setTimeout(() => this.flushCalls(), CALL_BATCH_MS);
  }

  /** The entry the page shows of a call (its payloads only when opted in). */
  private entryOf(call: CallEvent): CallEntry {
    const entry: CallEntry = {
      server: call.server,
      method: call.method,
      tool: call.tool,
      at: call.at,
      durationMs: call.durationMs,
      outcome: call.outcome,
      error: clip(call.error),
      sends: call.sends,
    };
    if (this.options.payloads) {
      entry.args = payload(call.method === 'tools/call' ? call.params?.arguments : call.params);
      entry.result = payload(call.result);
    }
    return entry;
  }

  private flushCalls(): void {
    this.batchTimer = undefined;
    const kept = Math.min(this.batchCount, CALLS_PER_BATCH);
    const batch: CallEntry[] = [];
    for (let i = kept; i > 0; i--) {
      const slot = (this.ringNext - i + CALLS_PER_BATCH) % CALLS_PER_BATCH;
      batch.push(this.entryOf(this.ring[slot]!));
      this.ring[slot] = undefined;
    }
    const dropped = this.batchCount - kept;
    this.batchCount = 0;
    this.calls = this.calls.concat(batch).slice(-CALLS_KEPT);
    this.broadcast(frame('calls', { calls: batch, dropped }));
  }

  /** The rows of the servers that moved, soon after they moved (not all thousand of them). */
  private sampleMoved(): void {
    this.soon = undefined;
    if (this.transitions.length > 0) {
      this.broadcast(frame('transitions', { transitions: this.transitions }));
      this.transitions = [];
    }
    const now = Date.now();
    const changed: string[] = [];
    for (const name of this.moved) {
      let status: StatusView;
      try {
        status = this.source.server(name).status();
      } catch {
        // Disabled or removed meanwhile: the full sample tells.
        this.moved.clear();
        return this.sample();
      }
      const json = JSON.stringify(this.row(name, status, now));
      if (this.sent.get(name) === json) continue;
      this.sent.set(name, json);
      changed.push(json);
    }
    this.moved.clear();
    if (changed.length > 0) this.broadcast(rowsFrame(changed, [], now));
  }

  /** A fleet of n servers is sampled fully every ceil(n / ROWS_PER_SECOND) seconds. */
  private pace(servers: number): void {
    this.ticksPerSample = Math.max(1, Math.ceil((servers * 1000) / (ROWS_PER_SECOND * this.options.sampleMs)));
  }

  private tick(): void {
    if (++this.ticks >= this.ticksPerSample) this.sample();
  }

  /** Sends the rows that changed since they were last sent, and says which servers are gone. */
  private sample(): void {
    this.ticks = 0;
    if (this.streams.size === 0) return;
    const now = Date.now();
    const changed: string[] = [];
    const status = this.source.status();
    for (const name in status) {
      const json = JSON.stringify(this.row(name, status[name]!, now));
      if (this.sent.get(name) === json) continue;
      this.sent.set(name, json);
      changed.push(json);
    }
    const names = Object.keys(status);
    this.pace(names.length);
    const removed = this.forgetMissing(new Set(names));
    if (changed.length > 0 || removed.length > 0) this.broadcast(rowsFrame(changed, removed, now));
  }

  private forgetMissing(present: Set<string>): string[] {
    const removed: string[] = [];
    for (const name of this.seen.keys()) {
      if (present.has(name)) continue;
      removed.push(name);
      this.sent.delete(name);
      this.seen.delete(name);
      this.timelines.delete(name);
    }
    return removed;
  }
}

/** A `rows` frame of rows already serialized (to tell whether they changed): each is serialized once. */
function rowsFrame(rows: string[], removed: string[], now: number): string {
  return `event: rows\ndata: {"rows":[${rows.join(',')}],"removed":${JSON.stringify(removed)},"now":${now}}\n\n`;
}
