// The monitor's filter language (the `f` key): space-separated terms that must all match.
//   openai            bare word: provider, model, key name, route (attempts) or status (substring, any case)
//   provider:gemini   p: — key:chat k: — model:gpt m: (the served target's too) — mode:native — status:429 s: (4xx, 5xx, err, ok, live)
//   -key:env          a leading "-" negates a term
import type { Row } from './rows.js';

type Field = 'provider' | 'key' | 'model' | 'mode' | 'status' | 'any';

export interface FilterTerm { field: Field; value: string; negate: boolean }
export interface Filter { text: string; terms: FilterTerm[] }

const FIELDS: Record<string, Field> = {
  provider: 'provider', p: 'provider', key: 'key', k: 'key', model: 'model', m: 'model', mode: 'mode', status: 'status', s: 'status',
};

export const NO_FILTER: Filter = { text: '', terms: [] };

export function parseFilter(text: string): Filter {
  const terms: FilterTerm[] = [];
  for (let word of text.trim().split(/\s+/)) {
    if (!word) continue;
    const negate = word.startsWith('-') && word.length > 1;
    if (negate) word = word.slice(1);
    const colon = word.indexOf(':');
    const field = colon > 0 ? FIELDS[word.slice(0, colon).toLowerCase()] : undefined;
    const value = (field ? word.slice(colon + 1) : word).toLowerCase();
    if (value) terms.push({ field: field ?? 'any', value, negate });
  }
  return { text: text.trim(), terms };
}

function statusMatches(row: Row, v: string): boolean {
  switch (v) {
    case 'err': case 'error': case 'errors': case 'failed': case 'fail': return row.state === 'error' || row.state === 'lost';
    case 'ok': case 'success': return row.state === 'ok';
    case 'live': case 'active': case 'running': case 'inflight': return row.state === 'live';
    default: break;
  }
  if (row.status === null) return false;
  const m = /^([1-5])xx$/.exec(v);
  if (m) return Math.floor(row.status / 100) === Number(m[1]);
  return /^\d{1,3}$/.test(v) && String(row.status).startsWith(v);
}

function termMatches(row: Row, t: FilterTerm): boolean {
  const has = (s: string | null) => s !== null && s.toLowerCase().includes(t.value);
  switch (t.field) {
    case 'provider': return has(row.provider) || has(row.served?.provider ?? null);
    case 'key': return has(row.keyName);
    case 'model': return has(row.model) || has(row.served?.model ?? null);
    case 'mode': return has(row.mode);
    case 'status': return statusMatches(row, t.value);
    // The route too: `529` or `openai` finds a request that met a 529 or fell back to OpenAI on the way.
    case 'any': return has(row.provider) || has(row.model) || has(row.keyName) || has(row.route) || statusMatches(row, t.value);
    default: { const never: never = t.field; return never; }
  }
}

export function matches(row: Row, filter: Filter): boolean {
  for (const t of filter.terms) if (termMatches(row, t) === t.negate) return false;
  return true;
}
