// Live page: requests as they happen, like `gateway monitor`. The page carries the latest recorded
// requests as a JSON data block; the script renders them and then follows /admin/usage/live.
import { Html, html, raw } from './html.js';
import type { StoredRequest } from '../observe/usage/queries.js';
import type { LiveRequest } from '../observe/usage/recorder.js';

/** JSON inside <script type="application/json">: `<` escaped so no text can close the element. */
export function jsonBlock(id: string, value: unknown): Html {
  return html`<script type="application/json" id="${id}">${raw(JSON.stringify(value).replace(/</g, '\\u003c'))}</script>`;
}

export function livePage(p: { recent: StoredRequest[]; inFlight: LiveRequest[]; now: number }): Html {
  return html`<div class="page-head">
  <div><h1>Live</h1><p class="sub">Every request through the gateway as it happens. Nothing here is stored in the browser.</p></div>
  <div class="head-actions">
    <span class="conn" id="live-conn" data-state="connecting"><span class="dot"></span><span class="label">Connecting…</span></span>
    <button type="button" class="btn ghost sm" id="live-pause" aria-pressed="false">Pause</button>
  </div>
</div>
<div class="stats four">
  <div class="stat"><div class="stat-label">In flight</div><div class="stat-value" id="live-inflight">0</div></div>
  <div class="stat"><div class="stat-label">Requests · last 5 min</div><div class="stat-value" id="live-rpm">0</div></div>
  <div class="stat"><div class="stat-label">Errors · last 5 min</div><div class="stat-value" id="live-errors">0</div></div>
  <div class="stat"><div class="stat-label">Tokens · last 5 min</div><div class="stat-value" id="live-tokens">0</div></div>
</div>
<section class="card flush">
  <table class="table live" id="live-table">
    <thead><tr><th>Time</th><th>Key</th><th>Model</th><th>Mode</th><th>Status</th><th class="num">TTFB</th><th class="num">Duration</th><th class="num">Tokens in / out</th><th class="num">Cost</th></tr></thead>
    <tbody></tbody>
  </table>
  <div class="empty" id="live-empty" hidden><h3>Waiting for requests</h3><p>Point an app at the gateway with a proxy key; its requests appear here the moment they start.</p></div>
</section>
${jsonBlock('live-init', { recent: p.recent, inFlight: p.inFlight, now: p.now })}`;
}
