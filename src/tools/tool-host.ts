/**
 * What calling and listing tools ask of their server: its requests and session, what its
 * `tools/list` results taught it (output schemas, `x-mcp-header` declarations), and the facts
 * its handshake settled. The server's runtime, as its port (runtime/server-port.ts) shows it.
 */
import type { Emitter } from '../core/emitter.js';
import type { ToolOutputSchemas } from '../protocol/tool-output.js';
import type { RuntimeEvents } from '../runtime/context/events.js';
import type { ToolHeaders } from '../runtime/requests/tool-headers.js';
import type { TaskHost } from '../tasks/tool-tasks.js';

export interface ToolHost extends TaskHost {
  readonly context: TaskHost['context'] & {
    readonly events: Pick<Emitter<RuntimeEvents>, 'on' | 'emit'>;
    /** The tools' output schemas, once a list was learned with `validateToolOutput` on. */
    readonly outputSchemas: ToolOutputSchemas | undefined;
    /** 2025-11-25: `runsToolTasks`, the server runs tools as tasks (`tasks.requests.tools.call`), as its handshake said. */
    readonly facts: { readonly runsToolTasks: boolean } | undefined;
  };
  readonly requests: TaskHost['requests'] & {
    /** Modern Streamable HTTP: `x-mcp-header` parameters are mirrored, invalid tool definitions left out. */
    readonly mirrorsToolHeaders: boolean;
    readonly toolHeaders: ToolHeaders;
  };
}
