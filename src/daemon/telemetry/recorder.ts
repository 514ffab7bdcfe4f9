// Turns the request events on the bus into metric values: each request's `started` is kept until
// its `finished`/`failed`, which then adds to the series (store.ts). A request's series are found
// once per combination of door, provider, model, status and key (a Bundle, cached), so recording
// a request is one key, one lookup and a few additions: about 1.3 µs all told, no I/O. Per-attempt figures
// (the provider calls, retries, key switches, fallbacks, connection errors) come from the end
// event's `attempts`.
import type { AttemptTiming, EventBus, GatewayEvent, RequestFailed, RequestFinished, RequestStarted } from '../observe/events.js';
import { bareModel, requestCost, type PriceTable } from '../observe/usage/prices.js';
import { errorType, type ModelLabels } from './labels.js';
import type { Metrics } from './metrics.js';
import { doorName, operationName, providerName } from './semconv.js';
import { observe, seriesKey, type Series } from './store.js';

/** In-flight requests remembered at most; an older one whose end never came is forgotten. */
const MAX_OPEN = 50_000;
/** Bundles kept at most (their keys hold raw model names): past this the cache starts over. */
const MAX_BUNDLES = 4096;
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

/** Every series one combination of request facts adds to. */
interface Bundle {
  readonly provider: string;
  readonly model: string;
  readonly key: string;
  readonly requests: Series;
  /** By TOKEN_TYPES index, made when first needed. */
  readonly tokens: Array<Series | undefined>;
  cost: Series | undefined;
  readonly gen: GenAi | undefined;
}

const providerOf = (target: string): string => target.slice(0, target.indexOf('/'));
const modelOf = (target: string): string => target.slice(target.indexOf('/') + 1);

export class MetricsRecorder {
  private readonly open = new Map<string, Open>();
  private readonly bundles = new Map<string, Bundle>();
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
    const provider = ev.served?.provider ?? s?.provider ?? null;
    // Named as the usage history names the row: the model the provider said, else the one asked of it.
    const requested = ev.served ? ev.served.model : s?.model ? bareModel(s.model) : null;
    const reported = ev.type === 'finished' && ev.model ? bareModel(ev.model) : null;
    const model = reported ?? requested;
    const err = ev.type === 'failed' ? ev.code : '';
    const b = this.bundle(ev, s, provider, requested, reported, err);
    b.requests.sum++;

    // A key's limit refuses a request once it is tracked (its record is a 429 like any other).
    if (ev.type === 'failed' && ev.limit !== undefined) this.d.metrics.limitRefusals.get([ev.limit]).sum++;
    if (ev.type === 'failed' && ev.refused) return;
    if (!s || !provider) return;

    // Tokens and cost, when the provider said how many.
    const u = ev.usage;
    this.tokens(b, 0, u.inputTokens);
    this.tokens(b, 1, u.outputTokens);
    this.tokens(b, 2, u.cachedTokens);
    this.tokens(b, 3, u.cacheWriteTokens);
    this.tokens(b, 4, u.reasoningTokens);
    const prices = this.d.prices();
    if (prices) {
      const cost = requestCost(prices, provider, model, u, ev.status, s.time)
        ?? (requested !== model ? requestCost(prices, provider, requested, u, ev.status, s.time) : null);
      if (cost) (b.cost ??= this.d.metrics.cost.get([b.provider, b.model, b.key])).sum += cost;
    }

    // The calls to providers: a native request's one call is the request itself.
    const calls: readonly AttemptTiming[] = ev.attempts ?? [{ target: `${provider}/${requested ?? ''}`, keyLabel: '', startMs: 0, endMs: ev.durationMs, outcome: String(ev.status) }];
    if (ev.attempts && (ev.attempts.length > 1 || ev.served || !/^\d+$/.test(ev.attempts[0]!.outcome))) this.moves(ev.attempts, `${s.provider}/${s.model}`);
    else if (ev.type === 'failed') {
      const kind = ev.code === 'upstream_unreachable' ? 'connect-error' : ev.code === 'upstream_timeout' ? 'timeout' : undefined;
      if (kind) this.upstreamError(provider, kind);
    }
    if (err === 'upstream_interrupted') this.upstreamError(provider, 'interrupted');

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
    const last = calls.length - 1;
    for (let i = 0; i < last; i++) this.call(gen.g[0]!, calls[i]!, '');
    const c = calls[last]!;
    if (c.target === `${provider}/${requested}` && c.outcome === String(ev.status)) observe(gen.call, (c.endMs - c.startMs) / 1000);
    else this.call(gen.g[0]!, c, ok ? gen.g[3]! : '');
    if (ok && streamed && ev.ttfbMs !== null) {
      observe(gen.firstChunk, Math.max(0, ev.ttfbMs - c.startMs) / 1000);
      const chunks = (ev as RequestFinished).chunks ?? 0;
      if (chunks > 1) observe(gen.perChunk, (ev.durationMs - ev.ttfbMs) / 1000 / (chunks - 1));
    }
  }

  /** The series of this combination of facts, found once and kept. */
  private bundle(ev: RequestFinished | RequestFailed, s: RequestStarted | undefined, provider: string | null, requested: string | null, reported: string | null, err: string): Bundle {
    // Labels follow config.json: a reload that changed the known models starts the bundles over.
    const generation = this.d.models.generation;
    if (generation !== this.generation) { this.bundles.clear(); this.generation = generation; }
    const id = `${s?.mode}\u0001${s?.path}\u0001${s?.provider}\u0001${s?.model}\u0001${provider}\u0001${requested}\u0001${reported}\u0001${ev.status}\u0001${err}\u0001${s?.keyName}`;
    let b = this.bundles.get(id);
    if (b) return b;
    if (this.bundles.size >= MAX_BUNDLES) this.bundles.clear();
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
    b = {
      provider: providerL, model: modelL, key, gen, cost: undefined, tokens: [],
      requests: m.requests.get([doorName(s?.mode ?? 'native'), providerL, modelL, String(ev.status), key]),
    };
    this.bundles.set(id, b);
    return b;
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
