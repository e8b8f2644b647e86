/**
 * The two MCP eras (spec 2026-07-28, basic/versioning): legacy versions open a session with
 * `initialize`; modern versions carry version, client capabilities and client info in every
 * request's `_meta`. What a pinned `protocolVersion` means, which modern errors are recognized,
 * and the `_meta` envelope of a modern request.
 */
import type { EraPreference } from '../../machines/connection.types.js';
import { SUPPORTED_PROTOCOL_VERSIONS, type ClientCapabilities, type Implementation } from './messages.js';

/** Declared once, by the connection machine. */
export type { EraPreference };

/** Modern versions this client speaks, newest first. */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;
export const LATEST_MODERN_VERSION = MODERN_PROTOCOL_VERSIONS[0];

const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
/** The per-request log level that replaced `logging/setLevel` (SEP-2575). */
const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';

/** Error codes the 2026-07-28 spec reserves (-32020..-32099) and defines so far. */
export const HEADER_MISMATCH = -32020;
export const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;
export const UNSUPPORTED_PROTOCOL_VERSION = -32022;

/** A JSON-RPC error only a modern server sends: its sender is modern, whatever else went wrong. */
export function isModernErrorCode(code: unknown): boolean {
  return (
    code === HEADER_MISMATCH || code === MISSING_REQUIRED_CLIENT_CAPABILITY || code === UNSUPPORTED_PROTOCOL_VERSION
  );
}

/** What a server's `protocolVersion` config asks for: an era, and maybe one version of it. */
export interface VersionPin {
  era: EraPreference;
  /** Exactly this version (a pinned version, never negotiated away). */
  version?: string | undefined;
}

export const PIN_VALUES: readonly string[] = [
  'auto',
  'legacy',
  'modern',
  ...MODERN_PROTOCOL_VERSIONS,
  ...SUPPORTED_PROTOCOL_VERSIONS,
];

/** `'auto'`, `'legacy'`, `'modern'` or a version this client speaks (validated by the config). */
export function pinOf(value: string): VersionPin {
  if (value === 'auto' || value === 'legacy' || value === 'modern') return { era: value };
  return { era: isModernVersion(value) ? 'modern' : 'legacy', version: value };
}

export function isModernVersion(version: unknown): boolean {
  return (MODERN_PROTOCOL_VERSIONS as readonly unknown[]).includes(version);
}

/** The newest modern version both sides speak (or the pinned one, if the server lists it). */
export function mutualModernVersion(supported: unknown, pinned?: string): string | undefined {
  if (!Array.isArray(supported)) return undefined;
  if (pinned !== undefined) return supported.includes(pinned) ? pinned : undefined;
  return MODERN_PROTOCOL_VERSIONS.find((version) => supported.includes(version));
}

/** The newest legacy version both sides speak. */
export function mutualLegacyVersion(supported: unknown): string | undefined {
  if (!Array.isArray(supported)) return undefined;
  return SUPPORTED_PROTOCOL_VERSIONS.find((version) => supported.includes(version));
}

/** The `_meta` every modern request carries; built once per negotiated version, merged per request. */
export class ModernEnvelope {
  private meta: Record<string, unknown>;

  constructor(
    readonly protocolVersion: string,
    capabilities: ClientCapabilities,
    clientInfo: Implementation,
    /** The level set with `setLoggingLevel`: without it the server sends no `notifications/message`. */
    logLevel?: string,
  ) {
    this.meta = {
      [META_PROTOCOL_VERSION]: protocolVersion,
      [META_CLIENT_CAPABILITIES]: capabilities,
      [META_CLIENT_INFO]: clientInfo,
    };
    if (logLevel !== undefined) this.meta[META_LOG_LEVEL] = logLevel;
  }

  /** Every later request asks for log messages at `level` and above. */
  setLogLevel(level: string): void {
    this.meta = { ...this.meta, [META_LOG_LEVEL]: level };
  }

  /** The request's params with the envelope in `_meta` (the caller's own `_meta` keys are kept). */
  wrap(params: Record<string, unknown> | undefined): Record<string, unknown> {
    if (params === undefined) return { _meta: this.meta };
    const own = params._meta;
    const meta =
      typeof own === 'object' && own !== null ? { ...(own as Record<string, unknown>), ...this.meta } : this.meta;
    return { ...params, _meta: meta };
  }
}
