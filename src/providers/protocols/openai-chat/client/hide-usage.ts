// A Chat stream on the Chat door's fast path goes to the client as it came, except the usage the
// gateway asked for on the client's behalf (stream_options.include_usage, so every stream can be
// accounted): that is taken out again, the `choices: []` usage chunk and the `usage` fields.

/** An event's data as the client gets it, or null to drop the event. `[DONE]` passes as is. */
export function hideUsage(data: string): string | null {
  if (data.includes('"usage":{')) {
    try {
      const chunk = JSON.parse(data) as { usage?: unknown; choices?: unknown[] };
      if (Array.isArray(chunk.choices) && chunk.choices.length === 0) return null;
      delete chunk.usage;
      return JSON.stringify(chunk);
    } catch { return data; }
  }
  if (data.includes('"usage":null')) {
    // Cheap path for the common serialisation; otherwise re-serialise without the field.
    if (data.endsWith(',"usage":null}')) return `${data.slice(0, -',"usage":null}'.length)}}`;
    try {
      const chunk = JSON.parse(data) as Record<string, unknown>;
      delete chunk.usage;
      return JSON.stringify(chunk);
    } catch { return data; }
  }
  return data;
}
