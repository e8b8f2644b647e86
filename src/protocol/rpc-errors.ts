/**
 * A JSON-RPC error response as its typed error: an `McpError`, or the subclass its code names
 * (-32042 URLElicitationRequired, -32020 HeaderMismatch), so callers can act on what it carries.
 */
import { McpError, type ErrorDetails } from '../core/errors.js';
import { HEADER_MISMATCH } from './era.js';
import { HeaderMismatchError } from './tool-header-errors.js';

/** What a URL-mode elicitation asks the user to open (spec 2025-11-25, client/elicitation). */
export interface UrlElicitation {
  mode: 'url';
  message: string;
  url: string;
  /** 2025-11-25 only; the 2026-07-28 shape has none. */
  elicitationId?: string;
  [key: string]: unknown;
}

/**
 * The server answered -32042 URLElicitationRequired (spec 2025-11-25): the request needs the user
 * to complete the `elicitations` (open each `url`) first; send it again afterwards. An `McpError`
 * too, so `rpcCode` checks hold.
 */
export class UrlElicitationRequiredError extends McpError {
  override readonly code = 'URL_ELICITATION_REQUIRED' as const;
  override readonly retryable = true;
  readonly elicitations: readonly UrlElicitation[];
  constructor(rpcMessage: string, data: unknown, details?: ErrorDetails) {
    super(URL_ELICITATION_REQUIRED, rpcMessage, data, details);
    const list = (data as { elicitations?: unknown } | undefined)?.elicitations;
    this.elicitations = Array.isArray(list) ? list.filter(isUrlElicitation) : [];
  }
}

export const URL_ELICITATION_REQUIRED = -32042;

/** The typed error for a JSON-RPC error response: an `McpError`, or the subclass its code names. */
export function mcpErrorOf(rpcCode: number, rpcMessage: string, data: unknown, details?: ErrorDetails): McpError {
  if (rpcCode === URL_ELICITATION_REQUIRED) return new UrlElicitationRequiredError(rpcMessage, data, details);
  if (rpcCode === HEADER_MISMATCH) return new HeaderMismatchError(rpcMessage, data, details);
  return new McpError(rpcCode, rpcMessage, data, details);
}

function isUrlElicitation(value: unknown): value is UrlElicitation {
  const v = value as Partial<UrlElicitation> | null;
  return typeof v === 'object' && v !== null && typeof v.url === 'string' && typeof v.message === 'string';
}
