/**
 * Capabilities the application declares beyond what its handlers declare: `experimental`,
 * `extensions` (spec 2026-07-28: keys are extension identifiers, `{vendor-prefix}/{name}` like
 * `_meta` keys, values settings objects), `tasks`, or more detail for a handler's capability
 * (`sampling.context`). They go into `initialize` (2025 era) and every request's `_meta`
 * (`io.modelcontextprotocol/clientCapabilities`, modern era).
 *
 * Declaring `roots`, `sampling` or `elicitation` without the handler that answers it is refused:
 * the server would send requests nobody answers.
 */
import { isObject } from '../../core/is-object.js';
import { ConfigError } from '../../core/errors.js';
import type { ClientCapabilities } from '../../protocol/messages.js';
import type { ClientHandlers } from '../server-input/server-requests.js';

export interface CapabilityOptions {
  handlers?: ClientHandlers | undefined;
  capabilities?: ClientCapabilities | undefined;
  extensions?: Record<string, Record<string, unknown>> | undefined;
  maxInputRounds?: number | undefined;
}

/** A `_meta`-style key with its mandatory prefix: dot-separated labels, a slash, a name. */
const LABEL = '[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?';
const EXTENSION_ID = new RegExp(`^${LABEL}(?:\\.${LABEL})*/[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`);

const NEEDS_HANDLER: Record<string, (handlers: ClientHandlers) => boolean> = {
  roots: (h) => h.roots !== undefined,
  sampling: (h) => h.sampling !== undefined,
  elicitation: (h) => h.elicitation !== undefined || h.urlElicitation !== undefined,
};

/** The extra capabilities (with `extensions` folded in), validated; undefined when none were given. */
export function extraCapabilities(options: CapabilityOptions): ClientCapabilities | undefined {
  const issues: { path: string; message: string }[] = [];
  const { capabilities, extensions } = options;
  if (options.maxInputRounds !== undefined && !(Number.isInteger(options.maxInputRounds) && options.maxInputRounds > 0))
    issues.push({ path: 'maxInputRounds', message: 'must be a positive integer' });
  if (capabilities !== undefined) checkCapabilities(capabilities, options.handlers ?? {}, issues);
  if (extensions !== undefined) checkExtensions(extensions, 'extensions', issues);
  if (issues.length > 0)
    throw new ConfigError(
      `invalid client capabilities: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
      issues,
    );
  if (extensions === undefined) return capabilities;
  const merged = { ...(capabilities?.extensions as Record<string, unknown> | undefined), ...extensions };
  return { ...capabilities, extensions: merged };
}

function checkCapabilities(
  capabilities: unknown,
  handlers: ClientHandlers,
  issues: { path: string; message: string }[],
): void {
  if (!isObject(capabilities)) {
    issues.push({ path: 'capabilities', message: 'must be an object' });
    return;
  }
  for (const [name, value] of Object.entries(capabilities)) {
    const path = `capabilities.${name}`;
    if (!isObject(value)) issues.push({ path, message: 'must be an object (an empty one declares support)' });
    else if (name === 'extensions') checkExtensions(value, path, issues);
    else if (NEEDS_HANDLER[name] && !NEEDS_HANDLER[name](handlers))
      issues.push({ path, message: `is declared without a handler to answer it (give handlers.${name})` });
  }
}

function checkExtensions(extensions: unknown, path: string, issues: { path: string; message: string }[]): void {
  if (!isObject(extensions)) {
    issues.push({ path, message: 'must be an object' });
    return;
  }
  for (const [id, settings] of Object.entries(extensions)) {
    if (!EXTENSION_ID.test(id))
      issues.push({ path: `${path}["${id}"]`, message: 'is not an extension identifier ({vendor-prefix}/{name})' });
    else if (!isObject(settings))
      issues.push({ path: `${path}["${id}"]`, message: 'must be a settings object (an empty one declares support)' });
  }
}

/** The handlers' capabilities with the extra ones on top, one level deep (`sampling: { context }` adds to `sampling: { tools }`). */
export function mergeCapabilities(declared: ClientCapabilities, extra: ClientCapabilities): ClientCapabilities {
  const merged: ClientCapabilities = { ...declared };
  for (const [name, value] of Object.entries(extra)) {
    const own = merged[name];
    merged[name] = isObject(own) && isObject(value) ? { ...own, ...value } : value;
  }
  return merged;
}

/**
 * The modern era's client capabilities: 2026-07-28 removed `notifications/roots/list_changed`
 * (its `roots` capability is an empty object), so `roots.listChanged` is not declared there; the
 * legacy `initialize` keeps it.
 */
export function withoutRootsListChanged(capabilities: ClientCapabilities): ClientCapabilities {
  const roots = capabilities.roots;
  if (!isObject(roots) || !('listChanged' in roots)) return capabilities;
  const { listChanged: _removed, ...rest } = roots;
  return { ...capabilities, roots: rest };
}
