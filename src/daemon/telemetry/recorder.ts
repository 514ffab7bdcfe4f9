// Turns the request events on the bus into metric values: each request's `started` is kept until
// its `finished`/`failed`, which then adds to the series (store.ts: additions into arrays, no
// I/O, no allocation beyond the label lists). Per-attempt figures (the provider calls, retries,
// key switches, fallbacks, connection errors) come from the end event's `attempts`.
import type { AttemptTiming, EventBus, GatewayEvent, RequestFailed, RequestFinished, RequestStarted } from '../observe/events.js';
import { bareModel, requestCost, type PriceTable } from '../observe/usage/prices.js';
import { errorType, type ModelLabels } from './labels.js';
import type { Metrics } from './metrics.js';
import { doorName, operationName, providerName } from './semconv.js';
import { seriesKey } from './store.js';

/** The kinds of limit a key can refuse a request for (#21 sets `limit` on those refusals). */
const LIMIT_KINDS: ReadonlySet<string> = new Set(['budget', 'rpm', 'tpm', 'concurrency']);
/** In-flight requests remembered at most; an older one whose end never came is forgotten. */
const MAX_OPEN = 50_000;

interface Open { readonly s: RequestStarted; streamKey: string | undefined }

export interface RecorderDeps {
  metrics: Metrics;
  models: ModelLabels;
  keyLabel: (name: string | undefined) => string;
  /** The usage history's price table (the same the usage recorder prices rows with), when there is one. */
  prices: () => PriceTable | undefined;
}

const providerOf = (target: string): string => target.slice(0, target.indexOf('/'));
const modelOf = (target: string): string => target.slice(target.indexOf('/') + 1);

export class MetricsRecorder {
  private readonly open = new Map<string, Open>();
  constructor(private readonly d: RecorderDeps) {}

  subscribe(bus: EventBus): () => void {
    return bus.subscribe((ev) => this.onEvent(ev));
  }

  /** A circuit breaker opened on `key`: a provider, or `provider/model`. */
  breakerOpened(key: string): void {
    const slash = key.indexOf('/');
    const provider = slash === -1 ? key : key.slice(0, slash);
    const model = slash === -1 ? '' : this.d.models.label(provider, key.slice(slash + 1));
    const v = [provider, model];
    this.d.metrics.breakerOpenings.add(seriesKey(v), v, 1);
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
    const { metrics: m, models } = this.d;
    const provider = ev.served?.provider ?? s?.provider ?? null;
    // Named as the usage history names the row: the model the provider said, else the one asked of it.
    const requested = ev.served ? ev.served.model : s?.model ? bareModel(s.model) : null;
    const reported = ev.type === 'finished' && ev.model ? bareModel(ev.model) : null;
    const model = reported ?? requested;
    const modelL = models.label(provider, model) || 'none';
    const providerL = provider ?? 'none';
    const key = this.d.keyLabel(s?.keyName);
    const door = doorName(s?.mode ?? 'native');
    const status = String(ev.status);
    const rv = [door, providerL, modelL, status, key];
    m.requests.add(seriesKey(rv), rv, 1);

    if (ev.type === 'failed' && ev.refused) {
      const kind = (ev as RequestFailed & { limit?: string }).limit;
      if (kind !== undefined && LIMIT_KINDS.has(kind)) m.limitRefusals.add(kind, [kind], 1);
      return;
    }
    if (!s || !provider) return;

    // Tokens and cost, when the provider said how many.
    const u = ev.usage;
    this.tokens(providerL, modelL, key, 'input', u.inputTokens);
    this.tokens(providerL, modelL, key, 'output', u.outputTokens);
    this.tokens(providerL, modelL, key, 'cache_read', u.cachedTokens);
    this.tokens(providerL, modelL, key, 'cache_write', u.cacheWriteTokens);
    this.tokens(providerL, modelL, key, 'reasoning', u.reasoningTokens);
    const prices = this.d.prices();
    if (prices) {
      const cost = requestCost(prices, provider, model, u, ev.status, s.time)
        ?? (requested !== model ? requestCost(prices, provider, requested, u, ev.status, s.time) : null);
      if (cost) { const cv = [providerL, modelL, key]; m.cost.add(seriesKey(cv), cv, cost); }
    }

    // The calls to providers: a native request's one call is the request itself.
    const calls: readonly AttemptTiming[] = ev.attempts ?? [{ target: `${provider}/${model ?? ''}`, keyLabel: '', startMs: 0, endMs: ev.durationMs, outcome: status }];
    if (ev.attempts) this.moves(ev.attempts, `${s.provider}/${s.model}`);
    else if (ev.type === 'failed') {
      const kind = ev.code === 'upstream_unreachable' ? 'connect-error' : ev.code === 'upstream_timeout' ? 'timeout' : undefined;
      if (kind) this.upstreamError(provider, kind);
    }
    if (ev.type === 'failed' && ev.code === 'upstream_interrupted') this.upstreamError(provider, 'interrupted');

    const op = operationName(s.mode, s.path);
    if (op === null) return;
    // GenAI series: the request as the gateway serves it.
    const ok = ev.type === 'finished' && ev.status < 400;
    const g = [op, providerName(provider), models.label(s.provider, s.model), reported === null ? '' : models.label(provider, reported)];
    const gk = seriesKey(g);
    const err = ev.type === 'failed' ? errorType(ev.code) : ev.status >= 400 ? String(ev.status) : '';
    const gv = [...g, err];
    m.serverDuration.observe(seriesKey(gv), gv, ev.durationMs / 1000);
    if (ok && ev.ttfbMs !== null) {
      m.serverFirstToken.observe(gk, g, ev.ttfbMs / 1000);
      const out = u.outputTokens ?? 0;
      if (out > 1) m.serverPerToken.observe(gk, g, (ev.durationMs - ev.ttfbMs) / 1000 / (out - 1));
    }
    if (u.inputTokens !== undefined) { const tv = [...g, 'input']; m.clientTokens.observe(seriesKey(tv), tv, u.inputTokens); }
    if (u.outputTokens !== undefined) { const tv = [...g, 'output']; m.clientTokens.observe(seriesKey(tv), tv, u.outputTokens); }

    // GenAI client series: each call the gateway made, the last one with the request's own end.
    for (let i = 0; i < calls.length; i++) {
      const c = calls[i]!;
      const last = i === calls.length - 1;
      const p = providerOf(c.target);
      const outcome = Number(c.outcome);
      const cErr = last && ev.type === 'failed' ? errorType(ev.code) : Number.isNaN(outcome) || outcome >= 400 ? errorType(c.outcome) : '';
      const cv = [op, providerName(p), models.label(p, modelOf(c.target)), last ? g[3]! : '', cErr];
      m.clientDuration.observe(seriesKey(cv), cv, (c.endMs - c.startMs) / 1000);
      if (last && ok && streamed && ev.ttfbMs !== null) {
        const fv = [op, cv[1]!, cv[2]!, cv[3]!];
        const fk = seriesKey(fv);
        m.clientFirstChunk.observe(fk, fv, Math.max(0, ev.ttfbMs - c.startMs) / 1000);
        const chunks = (ev as RequestFinished).chunks ?? 0;
        if (chunks > 1) m.clientPerChunk.observe(fk, fv, (ev.durationMs - ev.ttfbMs) / 1000 / (chunks - 1));
      }
    }
  }

  private tokens(provider: string, model: string, key: string, type: string, n: number | undefined): void {
    if (!n) return;
    const v = [provider, model, type, key];
    this.d.metrics.tokens.add(seriesKey(v), v, n);
  }

  private upstreamError(provider: string, kind: string): void {
    const v = [provider, kind];
    this.d.metrics.upstreamErrors.add(seriesKey(v), v, 1);
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
      if (c.target !== from) {
        const v = [providerOf(from), p];
        m.fallbacks.add(seriesKey(v), v, 1);
      } else if (before && c.keyLabel !== before.keyLabel) {
        m.keySwitches.add(p, [p], 1);
      } else if (before) {
        const v = [p, this.d.models.label(p, modelOf(c.target))];
        m.retries.add(seriesKey(v), v, 1);
      }
    }
  }
}
