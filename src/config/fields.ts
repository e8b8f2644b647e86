/**
 * Which keys a server entry may have: ours, and the ones other hosts write that do not apply
 * here (ignored knowingly, listed in docs/configuration.md). Anything else is probably a typo:
 * a warning with a "did you mean" suggestion, an error in strict mode.
 */
import { closest } from '../core/did-you-mean.js';

/** Keys the loader reads and removes before the schema sees the entry (interpolate.ts); the schema declares the rest. */
export const LOADER_FIELDS = ['envFile'] as const;

/**
 * Keys other hosts define that change nothing here: approval lists, UI labels, per-host tool
 * filters and dev-mode settings. Ignored without a warning.
 */
export const IGNORED_HOST_FIELDS: Readonly<Record<string, string>> = {
  autoApprove: 'Cline, Roo Code: tools approved without asking (no approval step here)',
  alwaysAllow: 'Roo Code: tools approved without asking (no approval step here)',
  disabledTools: 'Cline, Roo Code: tools hidden from the model (filter the tool list yourself)',
  includeTools: 'Gemini CLI: tool allow-list (filter the tool list yourself)',
  excludeTools: 'Gemini CLI: tool deny-list (filter the tool list yourself)',
  trust: 'Gemini CLI: skip confirmations (no confirmation step here)',
  description: 'a label for people',
  title: 'a label for people',
  gallery: 'VS Code: where the entry came from',
  version: 'VS Code: the gallery version of the entry',
  dev: 'VS Code: watch-and-restart while developing the server',
  sandboxEnabled: 'VS Code: runs the server in its sandbox (no sandbox here)',
  sandbox: 'VS Code: sandbox settings (no sandbox here)',
  extensionId: 'Claude Desktop: the extension that installed the entry',
};

/** Keys other hosts define whose meaning this package does not provide: a warning says what to do instead. */
export const UNSUPPORTED_HOST_FIELDS: Readonly<Record<string, string>> = {
  headersHelper: 'Claude Code runs this command for headers; it is not run here: put the headers in `headers`',
  oauth: 'Claude Code OAuth settings; give the built-in OAuth client options in `auth` instead',
  timeout: 'a host-specific timeout (its unit differs between hosts); use `requestTimeoutMs`',
  networkTimeout: 'Cline: use `requestTimeoutMs`',
  transportType: 'Cline: use `type` (http, sse, stdio)',
};

export interface FieldIssue {
  /** The key as written. */
  field: string;
  message: string;
}

/** Unknown and unsupported keys of an entry (ignored host keys are not reported). */
export function unknownFields(entry: Record<string, unknown>, knownFields: readonly string[]): FieldIssue[] {
  const known = new Set(knownFields);
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(entry)) {
    if (known.has(key) || Object.hasOwn(IGNORED_HOST_FIELDS, key)) continue;
    const unsupported = UNSUPPORTED_HOST_FIELDS[key];
    if (unsupported !== undefined) {
      issues.push({ field: key, message: `not supported: ${unsupported}` });
      continue;
    }
    const suggestion = closest(key, knownFields);
    issues.push({
      field: key,
      message: suggestion ? `unknown field (did you mean \`${suggestion}\`?)` : 'unknown field (ignored)',
    });
  }
  return issues;
}

/** Set on entries a loader has already checked, so the supervisor does not warn about them twice. */
export const WARNINGS_REPORTED: unique symbol = Symbol('mcp-supervisor.warningsReported');

export function warningsReported(entry: object): boolean {
  return (entry as { [WARNINGS_REPORTED]?: unknown })[WARNINGS_REPORTED] === true;
}
