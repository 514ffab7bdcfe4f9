// Turns the request events on the bus into metric values: each request's `started` is kept until
// its `finished`/`failed`, which then adds to the series (store.ts). A request's series are found
// once per combination of door, provider, model, status and key (a Bundle, cached), so recording
// a request is one key, one lookup and a few additions: about 1.3 µs all told, no I/O. Per-attempt figures
// (the provider calls, retries, key switches, fallbacks, connection errors) come from the end
// event's `attempts`.
import type { AttemptTiming, EventBus, GatewayEvent, RequestFailed, RequestFinished, RequestStarted } from '../observe/events.js';
import { bareModel, costFor, type PriceTable } from '../observe/usage/prices.js';
import { errorType, type ModelLabels } from './labels.js';
import type { Metrics } from './metrics.js';
import { doorName, operationName, providerName } from './semconv.js';
import { observe, seriesKey, type Series } from './store.js';

/** In-flight requests remembered at most; an older one whose end never came is forgotten. */
const MAX_OPEN = 50_000;
/** Bundles kept at most (their keys hold raw model names): past this the cache starts over. */
const MAX_BUNDLES = 4096;
/** Bundles compared field by field before a key is made. */
const RECENT = 8;
const TOKEN_TYPES = ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const;

interface Open { readonly s: RequestStarted; streamKey: string | undefined }

export interface RecorderDeps {
  metrics: Metrics;
  models: ModelLabels;
  keyLabel: (name: string | undefined) => string;
  /** The usage history's price table (the same the usage recorder prices rows with). */
  prices: () => PriceTable | undefined;
}

/** The GenAI series of one combination: [operation, provider, request model, response model]. */
interface GenAi {
  readonly g: readonly string[];
  readonly serverDuration: Series;
  readonly serverFirstToken: Series;
  readonly serverPerToken: Series;
  readonly tokensIn: Series;
  readonly tokensOut: Series;
  /** The call that answered, when it was to the target the request ended on. */
  readonly call: Series;
  readonly firstChunk: Series;
  readonly perChunk: Series;
}

/** The facts of a request that decide its series (a Bundle's), as the events carry them. */
interface Facts {
  readonly mode: string | undefined; readonly path: string | undefined;
  readonly startProvider: string | null | undefined; readonly startModel: string | null | undefined;
  readonly servedProvider: string | undefined; readonly servedModel: string | undefined;
  readonly reportedRaw: string | null | undefined; readonly status: number; readonly code: string | undefined;
  readonly keyName: string | undefined; readonly refused: boolean | undefined;
}

const factsOf = (ev: RequestFinished | RequestFailed, s: RequestStarted | undefined): Facts => ({
  mode: s?.mode, path: s?.path, startProvider: s?.provider, startModel: s?.model,
  servedProvider: ev.served?.provider, servedModel: ev.served?.model,
  reportedRaw: ev.type === 'finished' ? ev.model : undefined, status: ev.status, code: ev.type === 'failed' ? ev.code : undefined,
  keyName: s?.keyName, refused: ev.type === 'failed' ? ev.refused : undefined,
});

function sameFacts(f: Facts, ev: RequestFinished | RequestFailed, s: RequestStarted | undefined): boolean {
  return f.status === ev.status && f.mode === s?.mode && f.startModel === s?.model && f.keyName === s?.keyName
    && f.startProvider === s?.provider && f.path === s?.path
    && f.reportedRaw === (ev.type === 'finished' ? ev.model : undefined) && f.code === (ev.type === 'failed' ? ev.code : undefined)
    && f.servedProvider === ev.served?.provider && f.servedModel === ev.served?.model
    && f.refused === (ev.type === 'failed' ? ev.refused : undefined);
}

/** Every series one combination of request facts adds to. */
interface Bundle {
  readonly facts: Facts;
  /** What the end event says, derived once: the provider that served, the error code, the target it ended on and the status as an attempt's outcome. */
  readonly of: { readonly provider: string | null; readonly err: string; readonly target: string; readonly status: string };
  /** The request's cost by the model the provider said, else by the one asked of it (undefined without a price table). */
  readonly priced: { readonly model: CostOf; readonly requested: CostOf | undefined } | undefined;
  readonly provider: string;
  readonly model: string;
  readonly key: string;
  readonly requests: Series;
  /** By TOKEN_TYPES index, made when first needed. */
  readonly tokens: Array<Series | undefined>;
  cost: Series | undefined;
  readonly gen: GenAi | undefined;
}

type CostOf = ReturnType<typeof costFor>;

const providerOf = (target: string): string => target.slice(0, target.indexOf('/'));
const modelOf = (target: string): string => target.slice(target.indexOf('/') + 1);

export class MetricsRecorder {
  private readonly open = new Map<string, Open>();
  private readonly bundles = new Map<string, Bundle>();
  /** The bundles found last, the most frequent first (bundle()). */
  private readonly recent: Array<Bundle | undefined> = new Array(RECENT).fill(undefined);
  private generation = -1;
  constructor(private readonly d: RecorderDeps) {}

  subscribe(bus: EventBus): () => void {
    return bus.subscribe((ev) => this.onEvent(ev));
  }

  /** A circuit breaker opened on `key`: a provider, or `provider/model`. */
  breakerOpened(key: string): void {
    const slash = key.indexOf('/');
    const provider = slash === -1 ? key : key.slice(0, slash);
    const model = slash === -1 ? '' : this.d.models.label(provider, key.slice(slash + 1));
    this.d.metrics.breakerOpenings.get([provider, model]).sum++;
  }

  onEvent(ev: GatewayEvent): void {
    switch (ev.type) {
      case 'started': {
        if (this.open.size >= MAX_OPEN) this.open.delete(this.open.keys().next().value!);
        const o: Open = { s: ev, streamKey: undefined };
        this.open.set(ev.id, o);
        if (ev.stream) this.streamStarts(o);
        return;
      }
      case 'first_byte': {
        // A native request tells whether it streams only with its answer.
        const o = this.open.get(ev.id);
        if (o && ev.stream === true && o.streamKey === undefined) this.streamStarts(o);
        return;
      }
      case 'progress': return;
      case 'finished':
      case 'failed': {
        const o = this.open.get(ev.id);
        if (o) this.open.delete(ev.id);
        if (o?.streamKey !== undefined) this.d.metrics.streams.add(o.streamKey, [doorName(o.s.mode), o.s.provider ?? 'none'], -1);
        this.ended(ev, o?.s, o?.streamKey !== undefined);
        return;
      }
    }
  }

  private streamStarts(o: Open): void {
    const v = [doorName(o.s.mode), o.s.provider ?? 'none'];
    o.streamKey = seriesKey(v);
    this.d.metrics.streams.add(o.streamKey, v, 1);
  }

  private ended(ev: RequestFinished | RequestFailed, s: RequestStarted | undefined, streamed: boolean): void {
    const b = this.bundle(ev, s);
    b.requests.sum++;

    // A key's limit refuses a request once it is tracked (its record is a 429 like any other).
    if (ev.type === 'failed' && ev.limit !== undefined) this.d.metrics.limitRefusals.get([ev.limit]).sum++;
    if (ev.type === 'failed' && ev.refused) return;
    const provider = b.of.provider;
    if (!s || !provider) return;

    // Tokens and cost, when the provider said how many.
    const u = ev.usage;
    this.tokens(b, 0, u.inputTokens);
    this.tokens(b, 1, u.outputTokens);
    this.tokens(b, 2, u.cachedTokens);
    this.tokens(b, 3, u.cacheWriteTokens);
    this.tokens(b, 4, u.reasoningTokens);
    if (b.priced) {
      const cost = b.priced.model(u, ev.status, s.time) ?? (b.priced.requested ? b.priced.requested(u, ev.status, s.time) : null);
      if (cost) (b.cost ??= this.d.metrics.cost.get([b.provider, b.model, b.key])).sum += cost;
    }

    // The calls to providers: a native request's one call is the request itself.
    const attempts = ev.attempts;
    if (attempts && (attempts.length > 1 || ev.served || !/^\d+$/.test(attempts[0]!.outcome))) this.moves(attempts, `${s.provider}/${s.model}`);
    else if (ev.type === 'failed') {
      const kind = ev.code === 'upstream_unreachable' ? 'connect-error' : ev.code === 'upstream_timeout' ? 'timeout' : undefined;
      if (kind) this.upstreamError(provider, kind);
    }
    if (b.of.err === 'upstream_interrupted') this.upstreamError(provider, 'interrupted');

    const gen = b.gen;
    if (!gen) return;
    // GenAI series: the request as the gateway serves it.
    observe(gen.serverDuration, ev.durationMs / 1000);
    const ok = ev.type === 'finished' && ev.status < 400;
    if (ok && ev.ttfbMs !== null) {
      observe(gen.serverFirstToken, ev.ttfbMs / 1000);
      const out = u.outputTokens ?? 0;
      if (out > 1) observe(gen.serverPerToken, (ev.durationMs - ev.ttfbMs) / 1000 / (out - 1));
    }
    if (u.inputTokens !== undefined) observe(gen.tokensIn, u.inputTokens);
    if (u.outputTokens !== undefined) observe(gen.tokensOut, u.outputTokens);

    // GenAI client series: each call the gateway made, each with how it ended (the last one that answered with the response model).
    // Without attempts (a native request) the one call is the request itself, to the target it ended on.
    let callStartMs = 0;
    if (!attempts) observe(gen.call, ev.durationMs / 1000);
    else {
      const last = attempts.length - 1;
      for (let i = 0; i < last; i++) this.call(gen.g[0]!, attempts[i]!, '');
      const c = attempts[last]!;
      callStartMs = c.startMs;
      if (c.target === b.of.target && c.outcome === b.of.status) observe(gen.call, (c.endMs - c.startMs) / 1000);
      else this.call(gen.g[0]!, c, ok ? gen.g[3]! : '');
    }
    if (ok && streamed && ev.ttfbMs !== null) {
      observe(gen.firstChunk, Math.max(0, ev.ttfbMs - callStartMs) / 1000);
      const chunks = (ev as RequestFinished).chunks ?? 0;
      if (chunks > 1) observe(gen.perChunk, (ev.durationMs - ev.ttfbMs) / 1000 / (chunks - 1));
    }
  }

  /**
   * The series of this combination of facts, found once and kept. The last few found are compared
   * field by field first: most requests repeat a recent combination, and that costs no key string.
   */
  private bundle(ev: RequestFinished | RequestFailed, s: RequestStarted | undefined): Bundle {
    // Labels follow config.json: a reload that changed the known models starts the bundles over.
    const generation = this.d.models.generation;
    if (generation !== this.generation) { this.bundles.clear(); this.recent.fill(undefined); this.generation = generation; }
    const recent = this.recent;
    for (let i = 0; i < recent.length; i++) {
      const r = recent[i];
      if (r === undefined) break;
      if (sameFacts(r.facts, ev, s)) {
        if (i > 0) { recent[i] = recent[i - 1]; recent[i - 1] = r; } // a frequent one moves to the front
        return r;
      }
    }
    const facts = factsOf(ev, s);
    const id = `${facts.mode}\u0001${facts.path}\u0001${facts.startProvider}\u0001${facts.startModel}\u0001${facts.servedProvider}\u0001${facts.servedModel}\u0001${facts.reportedRaw}\u0001${facts.status}\u0001${facts.code}\u0001${facts.keyName}\u0001${facts.refused}`;
    let b = this.bundles.get(id);
    if (!b) {
      if (this.bundles.size >= MAX_BUNDLES) this.bundles.clear();
      b = this.makeBundle(ev, s, facts);
      this.bundles.set(id, b);
    }
    recent.copyWithin(1, 0);
    recent[0] = b;
    return b;
  }

  private makeBundle(ev: RequestFinished | RequestFailed, s: RequestStarted | undefined, facts: Facts): Bundle {
    const provider = ev.served?.provider ?? s?.provider ?? null;
    // Named as the usage history names the row: the model the provider said, else the one asked of it.
    const requested = ev.served ? ev.served.model : s?.model ? bareModel(s.model) : null;
    const reported = ev.type === 'finished' && ev.model ? bareModel(ev.model) : null;
    const model = reported ?? requested;
    const err = ev.type === 'failed' ? ev.code : '';
    const { metrics: m, models } = this.d;
    const providerL = provider ?? 'none';
    const modelL = models.label(provider, reported ?? requested) || 'none';
    const key = this.d.keyLabel(s?.keyName);
    const op = s && provider && !(ev.type === 'failed' && ev.refused) ? operationName(s.mode, s.path) : null;
    let gen: GenAi | undefined;
    if (op !== null) {
      const g = [op, providerName(provider!), models.label(s!.provider, s!.model), reported === null ? '' : models.label(provider, reported)];
      const e = err ? errorType(err) : ev.status >= 400 ? String(ev.status) : '';
      gen = {
        g,
        serverDuration: m.serverDuration.get([...g, e]),
        serverFirstToken: m.serverFirstToken.get(g),
        serverPerToken: m.serverPerToken.get(g),
        tokensIn: m.clientTokens.get([...g, 'input']),
        tokensOut: m.clientTokens.get([...g, 'output']),
        call: m.clientDuration.get([op, g[1]!, models.label(provider, requested), ev.status < 400 ? g[3]! : '', ev.status < 400 ? '' : String(ev.status)]),
        firstChunk: m.clientFirstChunk.get([op, g[1]!, models.label(provider, requested), g[3]!]),
        perChunk: m.clientPerChunk.get([op, g[1]!, models.label(provider, requested), g[3]!]),
      };
    }
    // The request's cost at the usage history's prices: by the model the provider said, else the one asked of it.
    const prices = this.d.prices();
    const priced = prices && provider ? { model: costFor(prices, provider, model), requested: requested !== model ? costFor(prices, provider, requested) : undefined } : undefined;
    return {
      facts, provider: providerL, model: modelL, key, gen, cost: undefined, tokens: [], priced,
      of: { provider, err, target: `${provider}/${requested}`, status: String(ev.status) },
      requests: m.requests.get([doorName(s?.mode ?? 'native'), providerL, modelL, String(ev.status), key]),
    };
  }

  private tokens(b: Bundle, type: number, n: number | undefined): void {
    if (!n) return;
    (b.tokens[type] ??= this.d.metrics.tokens.get([b.provider, b.model, TOKEN_TYPES[type]!, b.key])).sum += n;
  }

  /** One call outside the request's bundle (an earlier attempt, a call that ended otherwise than the request); `error.type` is how it ended. */
  private call(op: string, c: AttemptTiming, responseModel: string): void {
    const p = providerOf(c.target);
    const status = Number(c.outcome);
    const err = Number.isInteger(status) && status < 400 ? '' : errorType(c.outcome);
    observe(this.d.metrics.clientDuration.get([op, providerName(p), this.d.models.label(p, modelOf(c.target)), responseModel, err]), (c.endMs - c.startMs) / 1000);
  }

  private upstreamError(provider: string, kind: string): void {
    this.d.metrics.upstreamErrors.get([provider, kind]).sum++;
  }

  /** Retries, key switches and fallbacks: each call compared with the one before (the first with the route's start). */
  private moves(calls: readonly AttemptTiming[], startedOn: string): void {
    const m = this.d.metrics;
    for (let i = 0; i < calls.length; i++) {
      const c = calls[i]!;
      const p = providerOf(c.target);
      if (c.outcome === 'connect-error' || c.outcome === 'timeout') this.upstreamError(p, c.outcome);
      const before = i === 0 ? undefined : calls[i - 1]!;
      const from = before?.target ?? startedOn;
      if (c.target !== from) m.fallbacks.get([providerOf(from), p]).sum++;
      else if (before && c.keyLabel !== before.keyLabel) m.keySwitches.get([p]).sum++;
      else if (before) m.retries.get([p, this.d.models.label(p, modelOf(c.target))]).sum++;
    }
  }
}
