/**
 * XState's `Actor` keeps its options as `{ ...defaultOptions, ...options }`. On Node 20 (V8 11),
 * once that code is warm, every object built that way gets a hidden class of its own (a map and
 * a descriptor array, ~0.3 KB per actor, five actors per `connect()`); Node 22 shares one. When
 * a connection is ready its actors' options are swapped for objects of one class with the same
 * values: XState reads them again only when an actor starts (its input) and for dev tools.
 */
/** The options XState builds (and whatever else a caller passed, copied after them). */
class ActorOptions {
  clock: unknown;
  logger: unknown;
  devTools: unknown;
  id: unknown;
  src: unknown;
  parent: unknown;
  syncSnapshot: unknown;
  systemId: unknown;
  input: unknown;
  inspect: unknown;

  constructor(from: Record<string, unknown>) {
    this.clock = from.clock;
    this.logger = from.logger;
    this.devTools = from.devTools;
    this.id = from.id;
    this.src = from.src;
    this.parent = from.parent;
    this.syncSnapshot = from.syncSnapshot;
    this.systemId = from.systemId;
    this.input = sameShape(from.input);
    this.inspect = from.inspect;
    for (const key of Object.keys(from)) if (!(key in this)) (this as Record<string, unknown>)[key] = from[key];
  }
}

/**
 * The connection's input, copied key by key: built with a spread (supervised-server.ts), it has a
 * hidden class of its own on Node 20 too (~0.34 KB per connection); a copy made by assignment in
 * the same key order shares one with every other input.
 */
function sameShape(input: unknown): unknown {
  if (
    typeof input !== 'object' ||
    input === null ||
    Array.isArray(input) ||
    Object.getPrototypeOf(input) !== Object.prototype
  )
    return input;
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(input)) copy[key] = (input as Record<string, unknown>)[key];
  return copy;
}

type WithOptions = { options?: unknown; _parent?: unknown; getSnapshot(): { children?: Record<string, unknown> } };

function share(actor: WithOptions): void {
  const options = actor.options;
  if (options === undefined || options === null || options instanceof ActorOptions) return;
  actor.options = new ActorOptions(options as Record<string, unknown>);
}

/** The connection actor, its parent (the supervisor) and every actor below it. */
export function shareActorOptions(connection: unknown): void {
  if (!connection) return;
  const actor = connection as WithOptions;
  if (actor._parent) share(actor._parent as WithOptions);
  shareTree(actor);
}

function shareTree(actor: WithOptions): void {
  share(actor);
  const children = actor.getSnapshot().children;
  if (children) for (const child of Object.values(children)) if (child) shareTree(child as WithOptions);
}
