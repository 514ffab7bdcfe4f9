// Keys page: every proxy key with its status, last use and recent traffic; create (the key shown
// once, with a copy button) and revoke (after a confirmation) run through the script and /admin/keys.
import { Html, html } from './html.js';
import { fmtAgo, fmtCompact, fmtDateTime, fmtUsd } from './format.js';
import type { KeyView } from './keys-api.js';
import type { UsageGroup } from '../observe/usage/queries.js';

const STATUS_LABEL = { active: 'Active', expired: 'Expired', revoked: 'Revoked' } as const;

function expiry(k: KeyView, now: number): Html {
  if (!k.expiresAt) return html`<span class="muted">Never</span>`;
  const t = Date.parse(k.expiresAt);
  const days = Math.round((t - now) / 86_400_000);
  return html`<span title="${k.expiresAt}">${fmtDateTime(t)}</span>${t > now ? html`<div class="muted small">in ${days >= 1 ? `${days} d` : `${Math.max(1, Math.round((t - now) / 3_600_000))} h`}</div>` : ''}`;
}

function row(k: KeyView, stats: UsageGroup | undefined, now: number): Html {
  const lastUsed = k.lastUsedAt ? Date.parse(k.lastUsedAt) : null;
  return html`<tr data-key-id="${k.id}" data-status="${k.status}" class="${k.status === 'active' ? '' : 'dim'}">
  <td><div class="strong">${k.name}</div><div class="muted mono small">${k.id}</div></td>
  <td><span class="badge ${k.status}">${STATUS_LABEL[k.status]}</span></td>
  <td><span title="${k.createdAt}">${fmtDateTime(Date.parse(k.createdAt))}</span></td>
  <td>${lastUsed === null ? html`<span class="muted">Never</span>` : html`<span title="${k.lastUsedAt}">${fmtAgo(lastUsed, now)}</span>`}</td>
  <td>${k.status === 'revoked' && k.revokedAt ? html`<span class="muted">Revoked ${fmtAgo(Date.parse(k.revokedAt), now)}</span>` : expiry(k, now)}</td>
  <td>${k.models ? html`<div class="chips">${k.models.map((m) => html`<span class="chip mono">${m}</span>`)}</div>` : html`<span class="muted">All models</span>`}</td>
  <td class="num">${stats ? fmtCompact(stats.requests) : html`<span class="muted">0</span>`}</td>
  <td class="num">${stats ? fmtUsd(stats.cost) : html`<span class="muted">–</span>`}</td>
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

export function keysPage(p: { keys: KeyView[]; stats: Map<string, UsageGroup>; now: number; baseUrl: string; modelHints: string[] }): Html {
  const active = p.keys.filter((k) => k.status === 'active').length;
  const table = p.keys.length === 0
    ? html`<div class="empty"><h3>No keys yet</h3><p>Create a key for each app or person, so you can see who uses what and revoke one without touching the others.</p>
        <button type="button" class="btn primary" data-open="create-key">Create your first key</button></div>`
    : html`<table class="table" id="keys-table">
  <thead><tr><th>Name</th><th>Status</th><th>Created</th><th>Last used</th><th>Expires</th><th>Models</th><th class="num">Requests · 7d</th><th class="num">Cost · 7d</th><th></th></tr></thead>
  <tbody>${p.keys.map((k) => row(k, p.stats.get(k.id), p.now))}</tbody></table>`;
  return html`<div class="page-head">
  <div><h1>Keys</h1><p class="sub">${active} active ${active === 1 ? 'key' : 'keys'} · Apps authenticate to <span class="mono">${p.baseUrl}</span> with <span class="mono">sk-proxy-…</span> keys; your provider keys never leave the gateway.</p></div>
  <button type="button" class="btn primary" data-open="create-key">Create key</button>
</div>
<section class="card flush" data-base-url="${p.baseUrl}" id="keys-card">${table}</section>
${createDialog(p.modelHints)}${revokeDialog}`;
}
