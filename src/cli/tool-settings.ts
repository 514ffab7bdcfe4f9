// A coding tool's settings (dotted keys and JSON literals, see ToolPreset.settings) as the block
// `env` prints for the tool's own file, and as the nested object `run` merges into a copy of it.

/** `a.b.c = v` settings as a TOML file block: top-level keys first, then one [table] per prefix. */
export function tomlBlock(settings: Array<[string, string]>): string[] {
  const top: string[] = [];
  const tables = new Map<string, string[]>();
  for (const [key, value] of settings) {
    const dot = key.lastIndexOf('.');
    if (dot === -1) { top.push(`${key} = ${value}`); continue; }
    const table = key.slice(0, dot);
    if (!tables.has(table)) tables.set(table, []);
    tables.get(table)!.push(`${key.slice(dot + 1)} = ${value}`);
  }
  return [...top, ...[...tables].flatMap(([t, lines]) => [`[${t}]`, ...lines])];
}

export type JsonObject = { [key: string]: unknown };

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `a.b.c` = literal settings as one nested JSON object. */
export function settingsObject(settings: Array<[string, string]>): JsonObject {
  const root: JsonObject = {};
  for (const [key, literal] of settings) {
    const path = key.split('.');
    let at = root;
    for (const part of path.slice(0, -1)) {
      if (!isObject(at[part])) at[part] = {};
      at = at[part] as JsonObject;
    }
    at[path.at(-1)!] = JSON.parse(literal) as unknown;
  }
  return root;
}

/** The settings as a JSON file block. */
export function jsonBlock(settings: Array<[string, string]>): string[] {
  return JSON.stringify(settingsObject(settings), null, 2).split('\n');
}

/** `over` merged onto `base`: objects key by key, anything else (arrays too) replaced. */
export function deepMerge(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = isObject(v) && isObject(out[k]) ? deepMerge(out[k] as JsonObject, v) : v;
  return out;
}

/**
 * JSON with `//` and `/* *\/` comments (as tools like gemini-cli accept in their settings files)
 * parsed: comments outside strings become spaces, then JSON.parse.
 */
export function parseJsonWithComments(text: string): unknown {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      // Copy a string whole, escapes included.
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end === -1 ? text.length : end + 2;
      out += ' ';
    } else {
      out += c;
      i += 1;
    }
  }
  return JSON.parse(out) as unknown;
}
