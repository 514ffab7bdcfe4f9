// Keys page: every proxy key with its status, last use, recent traffic and limits (a budget's spend
// against it, with the period's chart); create (the key shown once, with a copy button) and revoke
// (after a confirmation) run through the script and /admin/keys.
import { Html, html } from './html.js';
import { fmtAgo, fmtCompact, fmtDateTime, fmtUsd } from './format.js';
import type { KeyView } from './keys-api.js';
import type { UsageGroup } from '../observe/usage/queries.js';
import { describeLimits, formatBudget, usd } from '../limits/limits.js';
import { budgetText, describeStanding, PERIOD_WORDS, resetText } from '../limits/standing-view.js';
import { meter, timeChart } from './charts.js';
import type { SpendSeries } from './budget-chart.js';

const STATUS_LABEL = { active: 'Active', expired: 'Expired', revoked: 'Revoked' } as const;

function expiry(k: KeyView, now: number): Html {
  if (!k.expiresAt) return html`<span class="muted">Never</span>`;
  const t = Date.parse(k.expiresAt);
  const days = Math.round((t - now) / 86_400_000);
  return html`<span title="${k.expiresAt}">${fmtDateTime(t)}</span>${t > now ? html`<div class="muted small">in ${days >= 1 ? `${days} d` : `${Math.max(1, Math.round((t - now) / 3_600_000))} h`}</div>` : ''}`;
}

/** A budget's spend as a bar and `$1.20 of $5.00 today`, with when it resets; the other limits on a line below. */
function limitsCell(k: KeyView): Html {
  const l = k.limits;
  if (!l) return html`<span class="muted">None</span>`;
  const b = k.standing?.budget;
  const others = { ...l, budget: undefined };
  const rest = describeLimits(others) === 'none' ? '' : k.standing ? describeStanding(others, k.standing) : describeLimits(others);
  const budget = !l.budget ? '' : !b
    ? html`<div>${formatBudget(l.budget)}</div>`
    : html`<div class="nowrap" data-budget-spent="${b.spent}" data-budget-max="${b.max}">${usd(b.spent)} of ${usd(b.max)} ${PERIOD_WORDS[b.period]}</div>
      ${meter(b.spent + b.held, b.max, b.left <= 0 ? 'err' : 's0')}
      <div class="muted small">${b.resetsAt === null ? 'never resets' : `resets ${resetText(b.resetsAt, l.tz)}`}</div>`;
  return html`<div class="limits" data-limits="${describeLimits(l)}">${budget}${rest ? html`<div class="muted small">${rest}</div>` : ''}</div>`;
}

/** A key's spend over its budget's period, per hour or day. */
function budgetCard(k: KeyView, series: SpendSeries): Html {
  const l = k.limits!;
  const b = k.standing?.budget;
  const chart = timeChart({
    id: `spend-${k.id}`, times: series.times, bucket: series.bucket, series: [{ name: 'Spend', cls: b && b.left <= 0 ? 'err' : 's0', values: series.usd }],
    // Down to a hundredth of a cent, so a few requests' spend is a bar, not a line on the floor;
    // ticks as short as the axis's margin ($0.0004, $1.5).
    format: (v) => `$${Number(v.toPrecision(2))}`, least: 0.0001, describe: (i) => `${fmtDateTime(series.times[i]!)}: ${fmtUsd(series.usd[i]!)}`,
  });
  const per = series.bucket === 'hour' ? 'per hour' : 'per day';
  const span = l.budget!.period === 'total' ? 'over the last 30 days' : PERIOD_WORDS[l.budget!.period];
  return html`<section class="card" data-budget-key="${k.id}">
  <div class="card-head"><h2>${k.name} <span class="muted small">${formatBudget(l.budget!)} · spend ${per} ${span}</span></h2>
    <span class="budget-standing">${b ? budgetText(b, l.tz) : 'spend unknown: the limit store could not be read'}</span></div>
  ${chart}
</section>`;
}

function row(k: KeyView, stats: UsageGroup | undefined, now: number): Html {
  const lastUsed = k.lastUsedAt ? Date.parse(k.lastUsedAt) : null;
  return html`<tr data-key-id="${k.id}" data-status="${k.status}" class="${k.status === 'active' ? '' : 'dim'}">
  <td><div class="strong">${k.name}${k.admin ? html` <span class="badge" data-admin-key>admin</span>` : ''}</div><div class="muted mono small">${k.id}</div></td>
  <td><span class="badge ${k.status}">${STATUS_LABEL[k.status]}</span></td>
  <td><span title="${k.createdAt}">${fmtDateTime(Date.parse(k.createdAt))}</span></td>
  <td>${lastUsed === null ? html`<span class="muted">Never</span>` : html`<span title="${k.lastUsedAt}">${fmtAgo(lastUsed, now)}</span>`}</td>
  <td>${k.status === 'revoked' && k.revokedAt ? html`<span class="muted">Revoked ${fmtAgo(Date.parse(k.revokedAt), now)}</span>` : expiry(k, now)}</td>
  <td>${k.models ? html`<div class="chips">${k.models.map((m) => html`<span class="chip mono">${m}</span>`)}</div>` : html`<span class="muted">All models</span>`}</td>
  <td class="num">${stats ? fmtCompact(stats.requests) : html`<span class="muted">0</span>`}</td>
  <td class="num">${stats ? fmtUsd(stats.cost) : html`<span class="muted">–</span>`}</td>
  <td class="limits-col">${limitsCell(k)}</td>
  <td class="actions">${k.status === 'active'
    ? html`<button type="button" class="btn danger-ghost sm" data-revoke="${k.id}" data-name="${k.name}">Revoke</button>`
    : ''}</td>
</tr>`;
}

function createDialog(modelHints: string[]): Html {
  return html`<dialog id="create-key" class="modal" aria-labelledby="create-key-title">
  <form id="create-key-form" class="modal-body" autocomplete="off">
    <h2 id="create-key-title">Create a proxy key</h2>
    <p class="muted">Apps send this key instead of a provider key. It is shown once, right after you create it.</p>
    <label class="field"><span>Name</span>
      <input name="name" required maxlength="64" pattern="[A-Za-z0-9._\\-]{1,64}" placeholder="my-app" autofocus>
      <small>Letters, digits, dot, dash, underscore.</small></label>
    <label class="field"><span>Expires</span>
      <select name="expires">
        <option value="">Never</option><option value="1d">In 1 day</option><option value="7d">In 7 days</option>
        <option value="30d" selected>In 30 days</option><option value="90d">In 90 days</option><option value="365d">In 1 year</option>
      </select></label>
    <label class="field"><span>Allowed models <em class="muted">(optional)</em></span>
      <input name="models" list="model-hints" placeholder="All models — or e.g. claude-sonnet-4-5, gpt-4.1-mini, gemini-2.5-*">
      <small>Comma-separated. A trailing * matches a family.</small></label>
    <fieldset class="limits-fields"><legend>Limits <em class="muted">(optional)</em></legend>
      <div class="grid two">
        <label class="field"><span>Budget</span><input name="budget" placeholder="5/day" aria-describedby="budget-help"></label>
        <label class="field"><span>Time zone</span><input name="tz" placeholder="UTC" list="tz-hints"></label>
        <label class="field"><span>Requests a minute</span><input name="rpm" inputmode="numeric" placeholder="60"></label>
        <label class="field"><span>Tokens a minute</span><input name="tpm" inputmode="numeric" placeholder="200000"></label>
        <label class="field"><span>At once</span><input name="concurrency" inputmode="numeric" placeholder="4"></label>
      </div>
      <small id="budget-help" class="muted">Budget in USD: 5/day, 20/week, 100/month, or 50 for a total that never resets. Days, weeks (from Monday) and months follow the time zone, UTC by default.</small>
    </fieldset>
    <datalist id="tz-hints"><option value="UTC"><option value="Europe/London"><option value="Europe/Berlin"><option value="America/New_York"><option value="America/Los_Angeles"><option value="Asia/Tokyo"></datalist>
    <datalist id="model-hints">${modelHints.map((m) => html`<option value="${m}">`)}</datalist>
    <p class="form-error" role="alert" hidden></p>
    <div class="modal-actions">
      <button type="button" class="btn ghost" data-close>Cancel</button>
      <button type="submit" class="btn primary">Create key</button>
    </div>
  </form>
  <div id="created-key" class="modal-body" hidden>
    <h2>Your new key</h2>
    <p class="notice warn">Copy it now: this is the only time it is shown. The gateway keeps only a hash.</p>
    <div class="copy-row"><input id="new-key" class="mono" readonly aria-label="New proxy key"><button type="button" class="btn primary" data-copy="#new-key">Copy</button></div>
    <p class="muted small">Use it with any OpenAI-compatible client:</p>
    <pre class="snippet mono" id="new-key-snippet"></pre>
    <div class="modal-actions"><button type="button" class="btn" data-close data-reload>Done</button></div>
  </div>
</dialog>`;
}

const revokeDialog = html`<dialog id="revoke-key" class="modal" aria-labelledby="revoke-key-title">
  <div class="modal-body">
    <h2 id="revoke-key-title">Revoke <span data-field="name"></span>?</h2>
    <p>Any app using this key gets <strong>401 Unauthorized</strong> from its next request. This cannot be undone.</p>
    <p class="form-error" role="alert" hidden></p>
    <div class="modal-actions">
      <button type="button" class="btn ghost" data-close>Cancel</button>
      <button type="button" class="btn danger" id="confirm-revoke">Revoke key</button>
    </div>
  </div>
</dialog>`;

export function keysPage(p: { keys: KeyView[]; stats: Map<string, UsageGroup>; spend: Map<string, SpendSeries>; now: number; baseUrl: string; modelHints: string[] }): Html {
  const active = p.keys.filter((k) => k.status === 'active').length;
  const table = p.keys.length === 0
    ? html`<div class="empty"><h3>No keys yet</h3><p>Create a key for each app or person, so you can see who uses what and revoke one without touching the others.</p>
        <button type="button" class="btn primary" data-open="create-key">Create your first key</button></div>`
    : html`<table class="table" id="keys-table">
  <thead><tr><th>Name</th><th>Status</th><th>Created</th><th>Last used</th><th>Expires</th><th>Models</th><th class="num">Requests · 7d</th><th class="num">Cost · 7d</th><th>Limits</th><th></th></tr></thead>
  <tbody>${p.keys.map((k) => row(k, p.stats.get(k.id), p.now))}</tbody></table>`;
  return html`<div class="page-head">
  <div><h1>Keys</h1><p class="sub">${active} active ${active === 1 ? 'key' : 'keys'} · Apps authenticate to <span class="mono">${p.baseUrl}</span> with <span class="mono">sk-proxy-…</span> keys; your provider keys never leave the gateway.</p></div>
  <button type="button" class="btn primary" data-open="create-key">Create key</button>
</div>
<section class="card flush" data-base-url="${p.baseUrl}" id="keys-card">${table}</section>
${p.keys.filter((k) => k.status === 'active' && p.spend.has(k.id)).map((k) => budgetCard(k, p.spend.get(k.id)!))}
${createDialog(p.modelHints)}${revokeDialog}`;
}
