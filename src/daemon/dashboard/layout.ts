// The frame every dashboard page shares: head (own CSS and script only), top bar with navigation
// and daemon status, and the content. The CSRF token rides in a meta tag for the script's writes.
import { Html, html } from './html.js';
import { fmtUptime } from './format.js';
import { storeHealthText } from '../store/store-health.js';

export type PageId = 'usage' | 'live' | 'keys' | 'providers';

const NAV: Array<{ id: PageId; label: string }> = [
  { id: 'usage', label: 'Usage' },
  { id: 'live', label: 'Live' },
  { id: 'keys', label: 'Keys' },
  { id: 'providers', label: 'Providers' },
];

export const LOGO = html`<svg class="logo" viewBox="0 0 32 32" aria-hidden="true"><rect width="32" height="32" rx="8" class="logo-bg"/><path d="M8 11h6l4 5-4 5H8" class="logo-line"/><path d="M18 16h6" class="logo-line"/><circle cx="24" cy="16" r="2.2" class="logo-dot"/></svg>`;

export interface Chrome {
  csrf: string;
  url: string;
  version: string;
  uptimeMs: number;
  inFlight: number;
  /** Team mode: the shared store and whether it answers (absent on a laptop). */
  store?: { display: string; connected: boolean; downSince: string | null };
}

function head(title: string, csrf: string | null, referrer: 'no-referrer' | 'same-origin' = 'no-referrer'): Html {
  return html`<meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
${csrf ? html`<meta name="csrf-token" content="${csrf}">` : ''}<meta name="referrer" content="${referrer}">
<title>${title} · model-gateway</title>
<link rel="icon" href="/dashboard/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/dashboard/assets/app.css">
<script src="/dashboard/assets/app.js" defer></script>`;
}

export function page(p: { id: PageId; title: string; chrome: Chrome; body: Html }): string {
  const c = p.chrome;
  const host = c.url.replace(/^https?:\/\//, '');
  const degraded = c.store && !c.store.connected ? c.store : undefined;
  return html`<!doctype html>
<html lang="en"><head>${head(p.title, c.csrf)}</head>
<body data-page="${p.id}">
<header class="topbar"><div class="wrap topbar-inner">
  <a class="brand" href="/dashboard/usage">${LOGO}<span>model-gateway</span></a>
  <nav class="nav">${NAV.map((n) => html`<a href="/dashboard/${n.id}"${n.id === p.id ? html` aria-current="page"` : ''}>${n.label}</a>`)}</nav>
  <div class="daemon">
    <span class="pill" title="gateway ${c.version}, up ${fmtUptime(c.uptimeMs)}${c.store ? `, store ${c.store.display} ${storeHealthText(c.store)}` : ''}"><span class="dot ${degraded ? 'warn' : 'ok'}"></span>${host}<span class="sep">·</span>up ${fmtUptime(c.uptimeMs)}</span>
    <button type="button" class="btn ghost sm" data-action="logout">Sign out</button>
  </div>
</div></header>
${degraded ? html`<div class="degraded" role="alert"><div class="wrap"><strong>${storeHealthText(degraded)}</strong> (${degraded.display}): each daemon serves keys on its share of their limits and refuses keys set to fail closed; what it settles is written back when the store returns.</div></div>` : ''}
<main class="wrap">${p.body}</main>
<div class="toast" id="toast" role="status" aria-live="polite" hidden></div>
</body></html>`.value;
}

/**
 * A page outside the session: sign-in help, expired links, signed out. `referrer`: same-origin for a
 * page whose form posts back to us (a browser sends such a POST's Origin only then).
 */
export function plainPage(title: string, body: Html, referrer: 'no-referrer' | 'same-origin' = 'no-referrer'): string {
  return html`<!doctype html>
<html lang="en"><head>${head(title, null, referrer)}</head>
<body class="plain"><main class="center-card">
  <div class="brand big">${LOGO}<span>model-gateway</span></div>
  ${body}
</main></body></html>`.value;
}
