// OpenAI streams in unified mode pass through as they come; only the usage we asked for on the
// client's behalf is taken out again (the `choices: []` usage chunk and the `usage: null` fields).
import type { OpenAIUsage, SseEvent } from '../types.js';

export interface OpenAIStreamFilter {
  /** The data line to send for an event, or null to drop it. `[DONE]` passes as is. */
  filter(event: SseEvent): string | null;
  usage(): OpenAIUsage | undefined;
  model(): string | undefined;
  sawDone(): boolean;
}

export function createOpenAIStreamFilter(clientWantsUsage: boolean): OpenAIStreamFilter {
  let usage: OpenAIUsage | undefined;
  let model: string | undefined;
  let done = false;
  return {
    filter(ev) {
      const data = ev.data;
      if (data === '[DONE]') { done = true; return data; }
      if (model === undefined) { const m = /"model":"([^"]+)"/.exec(data); if (m) model = m[1]; }
      const hasUsage = data.includes('"usage":{');
      if (hasUsage) {
        try {
          const chunk = JSON.parse(data) as { usage?: OpenAIUsage; choices?: unknown[] };
          if (chunk.usage) usage = chunk.usage;
          if (!clientWantsUsage) {
            if (Array.isArray(chunk.choices) && chunk.choices.length === 0) return null;
            delete chunk.usage;
            return JSON.stringify(chunk);
          }
        } catch { return data; }
        return data;
      }
      if (!clientWantsUsage && data.includes('"usage":null')) {
        // Cheap path for the common serialisation; otherwise re-serialise without the field.
        if (data.endsWith(',"usage":null}')) return `${data.slice(0, -',"usage":null}'.length)}}`;
        try {
          const chunk = JSON.parse(data) as Record<string, unknown>;
          delete chunk.usage;
          return JSON.stringify(chunk);
        } catch { return data; }
      }
      return data;
    },
    usage: () => usage,
    model: () => model,
    sawDone: () => done,
  };
}
