// Tools a Responses client groups under a namespace (Codex sends its MCP servers' tools as
// `{"type":"namespace","name":"mcp__weather","tools":[{"name":"get_weather",…}]}`) reach other
// models as one flat tool each, named `<namespace>__<name>` (`mcp__weather__get_weather`); a call
// of such a name goes back to the client as its own name with its `namespace`, as OpenAI answers.

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export function qualifiedName(namespace: string | undefined, name: string): string {
  return namespace === undefined ? name : `${namespace}__${name}`;
}

/** How the client knows a tool the model calls by its flat name. */
export interface ClientTool { name: string; namespace?: string; custom: boolean }

/** The client's function and custom tools by the flat name the model sees (from the request's `tools`). */
export function clientTools(tools: unknown): ReadonlyMap<string, ClientTool> {
  const out = new Map<string, ClientTool>();
  const add = (t: unknown, namespace: string | undefined): void => {
    if (!isObj(t) || typeof t.name !== 'string') return;
    if (t.type === 'namespace' && namespace === undefined) { if (Array.isArray(t.tools)) for (const inner of t.tools) add(inner, t.name); return; }
    if (t.type !== 'function' && t.type !== 'custom') return;
    const tool: ClientTool = { name: t.name, custom: t.type === 'custom' };
    if (namespace !== undefined) tool.namespace = namespace;
    out.set(qualifiedName(namespace, t.name), tool);
  };
  if (Array.isArray(tools)) for (const t of tools) add(t, undefined);
  return out;
}
