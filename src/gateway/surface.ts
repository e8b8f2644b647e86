/**
 * What the host sees: the tools of every server under the catalog's names (those of a `failed`
 * server left out: never a tool that cannot answer), and the resources, resource templates and
 * prompts of every serving server, with the routes back to their servers. Resource URIs stay as
 * the server gave them unless two servers give the same one; then each is namespaced
 * (`mcp-supervisor://<server>/<uri, encoded>`). Prompt names are prefixed like tool names.
 */
import { prefixOf, resolveCatalogOptions, type ResolvedCatalogOptions } from '../catalog/options.js';
import type { CatalogTool } from '../catalog/types.js';
import type { Tool } from '../protocol/messages.js';
import type { Prompt, Resource, ResourceTemplate } from '../protocol/results.js';
import type { ServerHandle } from '../handle/server-handle.js';
import type { Supervisor } from '../supervisor/supervisor.js';
import { STATUS_TOOL_NAME, type ResolvedGatewayOptions } from './options.js';

const NAMESPACED = /^mcp-supervisor:\/\/([^/]+)\/(.*)$/;

export const STATUS_TOOL: Tool = {
  name: STATUS_TOOL_NAME,
  title: 'MCP server status',
  description:
    'The state of every MCP server behind this gateway (ready, reconnecting, failed, …), its last error and restarts. Use it when a tool call failed or tools seem missing.',
  inputSchema: { type: 'object', properties: {} },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
};

export interface Route {
  server: string;
  /** The name or URI on the server. */
  original: string;
}

export class Surface {
  private readonly naming: ResolvedCatalogOptions;
  private readonly resourceRoutes = new Map<string, Route>();
  private readonly promptRoutes = new Map<string, Route>();
  /** Template URI → server, for reads and completions of URIs made from a template. */
  private readonly templates = new Map<string, { server: string; pattern: RegExp }>();

  constructor(
    private readonly sup: Supervisor,
    private readonly options: ResolvedGatewayOptions,
  ) {
    this.naming = resolveCatalogOptions(options.catalog);
  }

  /** Every server's handle (configured and enabled). */
  handles(): ServerHandle[] {
    const handles: ServerHandle[] = [];
    for (const name of Object.keys(this.sup.status())) {
      try {
        handles.push(this.sup.server(name));
      } catch {
        // disabled: no handle
      }
    }
    return handles;
  }

  handle(server: string): ServerHandle | undefined {
    try {
      return this.sup.server(server);
    } catch {
      return undefined;
    }
  }

  isFailed(server: string): boolean {
    return this.handle(server)?.status().state === 'failed';
  }

  async tools(): Promise<Tool[]> {
    const snapshot = await this.sup.catalog.list();
    const tools: Tool[] = [];
    for (const tool of snapshot.tools)
      if (!this.isFailed(tool.server)) tools.push({ ...tool.definition, name: tool.name });
    if (this.options.statusTool) tools.push(STATUS_TOOL);
    return tools;
  }

  /** A tool by its exposed name, as the catalog knows it now (no listing): the common case, without a promise. */
  knownTool(name: string): CatalogTool | undefined {
    return this.sup.catalog.tool(name);
  }

  /** A tool by its exposed name; a name not known yet is looked up again after a listing. */
  async tool(name: string): Promise<CatalogTool | undefined> {
    const known = this.sup.catalog.tool(name);
    if (known) return known;
    await this.sup.catalog.list();
    return this.sup.catalog.tool(name);
  }

  /** The handles of ready servers whose session offers `capability`. */
  offering(capability: 'resources' | 'prompts' | 'completions' | 'logging'): ServerHandle[] {
    return this.handles().filter((handle) => handle.handshake()?.capabilities[capability] !== undefined);
  }

  async resources(): Promise<Resource[]> {
    const listed = await settled(this.offering('resources'), (handle) => handle.listResources());
    const owners = new Map<string, number>();
    for (const { value } of listed)
      for (const resource of value.resources) owners.set(resource.uri, (owners.get(resource.uri) ?? 0) + 1);
    this.resourceRoutes.clear();
    const resources: Resource[] = [];
    for (const { handle, value } of listed) {
      for (const resource of value.resources) {
        const uri = owners.get(resource.uri)! > 1 ? namespaced(handle.name, resource.uri) : resource.uri;
        this.resourceRoutes.set(uri, { server: handle.name, original: resource.uri });
        resources.push({ ...resource, uri });
      }
    }
    return resources;
  }

  async resourceTemplates(): Promise<ResourceTemplate[]> {
    const listed = await settled(this.offering('resources'), (handle) => handle.listResourceTemplates());
    this.templates.clear();
    const templates: ResourceTemplate[] = [];
    for (const { handle, value } of listed) {
      for (const template of value.resourceTemplates) {
        this.templates.set(template.uriTemplate, {
          server: handle.name,
          pattern: templatePattern(template.uriTemplate),
        });
        templates.push(template);
      }
    }
    return templates;
  }

  /** The server of a resource URI: a listed one, a namespaced one, one a template makes, or the only server with resources. */
  async resourceRoute(uri: string): Promise<Route | undefined> {
    const route = this.resourceRoutes.get(uri) ?? fromNamespaced(uri) ?? this.byTemplate(uri);
    if (route) return route;
    if (this.resourceRoutes.size === 0) await this.resources();
    if (this.templates.size === 0) await this.resourceTemplates();
    const found = this.resourceRoutes.get(uri) ?? this.byTemplate(uri);
    if (found) return found;
    const offering = this.offering('resources');
    return offering.length === 1 ? { server: offering[0]!.name, original: uri } : undefined;
  }

  /** The server of a resource template (completion of its variables). */
  templateServer(uriTemplate: string): string | undefined {
    return this.templates.get(uriTemplate)?.server;
  }

  async prompts(): Promise<Prompt[]> {
    const listed = await settled(this.offering('prompts'), (handle) => handle.listPrompts());
    this.promptRoutes.clear();
    const prompts: Prompt[] = [];
    for (const { handle, value } of listed) {
      const prefix = prefixOf(this.naming, handle.name);
      for (const prompt of value.prompts) {
        const name = prefix === undefined ? prompt.name : `${prefix}${this.naming.separator}${prompt.name}`;
        this.promptRoutes.set(name, { server: handle.name, original: prompt.name });
        prompts.push({ ...prompt, name });
      }
    }
    return prompts;
  }

  async promptRoute(name: string): Promise<Route | undefined> {
    if (!this.promptRoutes.has(name)) await this.prompts();
    return this.promptRoutes.get(name);
  }

  /** Every server's state, for the status tool: nothing secret (status() is redacted). */
  statusReport(): Record<string, unknown> {
    const report: Record<string, unknown> = {};
    for (const [name, status] of Object.entries(this.sup.status())) {
      report[name] = {
        state: status.state,
        transport: status.transport,
        protocolVersion: status.protocolVersion,
        restarts: status.restarts,
        lastError: status.lastError,
        nextAttemptAt: status.nextAttemptAt === undefined ? undefined : new Date(status.nextAttemptAt).toISOString(),
      };
    }
    return report;
  }

  private byTemplate(uri: string): Route | undefined {
    for (const { server, pattern } of this.templates.values()) if (pattern.test(uri)) return { server, original: uri };
    return undefined;
  }
}

/** Each server's answer; a server whose listing failed is left out (its list_changed comes when it is back). */
async function settled<T>(
  handles: readonly ServerHandle[],
  list: (handle: ServerHandle) => Promise<T>,
): Promise<{ handle: ServerHandle; value: T }[]> {
  const results = await Promise.allSettled(handles.map(list));
  const listed: { handle: ServerHandle; value: T }[] = [];
  results.forEach((result, index) => {
    if (result.status === 'fulfilled') listed.push({ handle: handles[index]!, value: result.value });
  });
  return listed;
}

function namespaced(server: string, uri: string): string {
  return `mcp-supervisor://${encodeURIComponent(server)}/${encodeURIComponent(uri)}`;
}

function fromNamespaced(uri: string): Route | undefined {
  const match = NAMESPACED.exec(uri);
  if (!match) return undefined;
  try {
    return { server: decodeURIComponent(match[1]!), original: decodeURIComponent(match[2]!) };
  } catch {
    return undefined;
  }
}

/** An RFC 6570 template as a matcher: every `{…}` expression stands for any text. */
function templatePattern(template: string): RegExp {
  const parts = template.split(/\{[^}]*\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`);
}
