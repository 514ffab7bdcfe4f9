// Providers page: which provider keys are configured and where from (environment, keychain,
// insecure file), a test against each provider's models endpoint, and a password field that sends
// a key once to the keychain, each provider's key pool and open circuit breakers. Keys are never
// shown: at most their last four characters.
import { Html, html } from './html.js';
import { PROTOCOL_FACTS } from '../../providers/protocol-facts.js';
import { findProvider } from '../../providers/registry.js';
import type { KeychainView, ProviderView } from './providers-api.js';
import type { PoolKeyReport } from '../access/provider-keys.js';

const clockTime = (ms: number | string) => new Date(ms).toLocaleTimeString('en-GB', { hour12: false });

/** One key of the provider's pool and what requests can do with it now. */
function keyState(k: PoolKeyReport): Html {
  return k.state === 'resting' ? html`<span class="badge expired">resting until ${clockTime(k.until!)}</span>`
    : k.state === 'refused' ? html`<span class="badge error">refused (${String(k.status ?? '')})</span>`
    : html`<span class="badge ok">ok</span>`;
}

/** The pool (shown when there are several keys, or the one key is not usable now) and the open breakers. */
function routingFacts(p: ProviderView): Html | '' {
  const pool = p.keys.length > 1 || p.keys.some((k) => k.state !== 'ok');
  return html`${pool ? html`<dt>Key pool</dt><dd><ul class="key-pool">${p.keys.map((k) => html`<li data-key-label="${k.label}" data-state="${k.state}"><span class="mono">${k.label}</span> <span class="mono muted">${k.masked}</span> ${keyState(k)}</li>`)}</ul></dd>` : ''}
    ${p.breakers.length ? html`<dt>Breaker</dt><dd>${p.breakers.map((b) => html`<div data-breaker="${b.target}"><span class="badge error">open</span> <span class="mono small">${b.target}</span> <span class="muted small">until ${clockTime(b.until)}; requests go to its fallbacks</span></div>`)}</dd>` : ''}`;
}

const ORIGIN_LABEL = { environment: 'environment variable', keychain: 'OS keychain', 'insecure-file': 'insecure file (0600)' } as const;
function card(p: ProviderView, keychain: KeychainView): Html {
  const d = findProvider(p.provider);
  const name = d?.displayName ?? p.provider;
  const from = p.origin === 'environment' ? html`<span class="mono">${p.envVar}</span>`
    : p.origin === 'keychain' ? html`${keychain.name ?? 'OS keychain'}`
    : p.origin ? html`${ORIGIN_LABEL[p.origin]}` : '';
  return html`<section class="card provider" data-provider="${p.provider}">
  <div class="provider-head">
    <span class="provider-mark ${p.provider}" aria-hidden="true">${name.slice(0, 1)}</span>
    <div><h2>${name}</h2><div class="muted small mono">${p.baseUrl}</div></div>
    <span class="badge ${p.configured ? 'active' : 'muted'}">${p.keyless ? 'No key needed' : p.configured ? 'Configured' : 'Not configured'}</span>
  </div>
  <dl class="facts">
    <dt>Protocol</dt><dd class="mono small">${p.protocol}${p.quirks ? html` · profile ${p.quirks}` : ''}</dd>
    ${p.keyless ? html`<dt>Key</dt><dd><span class="muted">none: a local server, sent no credential</span></dd>` : html`<dt>Key</dt><dd>${p.configured ? html`<span class="mono">…${p.last4 ?? '····'}</span>` : html`<span class="muted">none</span>`}</dd>
    <dt>Source</dt><dd>${p.configured ? from : html`<span class="muted">—</span>`}${p.shadowed.length ? html`<div class="muted small">overrides the key in ${p.shadowed.map((o) => ORIGIN_LABEL[o]).join(', ')}</div>` : ''}</dd>`}
    ${routingFacts(p)}
    <dt>Native path</dt><dd class="mono small">${d ? `/${d.id}${PROTOCOL_FACTS[d.protocol].mainPath}` : ''}</dd>
  </dl>
  <div class="provider-actions">
    <button type="button" class="btn" data-test-provider="${p.provider}"${p.configured ? '' : html` disabled`}>${p.keyless ? 'Test' : 'Test key'}</button>
    ${p.keyless ? '' : keychain.available
      ? html`<button type="button" class="btn ghost" data-set-key="${p.provider}" data-name="${name}">${p.configured ? 'Store a new key…' : 'Set key…'}</button>`
      : html`<button type="button" class="btn ghost" disabled title="No usable keychain here: use gateway providers set ${p.provider} --insecure-storage">Set key…</button>`}
  </div>
  <p class="test-result" data-result="${p.provider}" role="status" aria-live="polite" hidden></p>
  ${p.origin === 'environment' ? html`<p class="muted small">${p.envVar} is set in the daemon's environment and wins over any stored key.</p>` : ''}
  ${p.configured ? '' : html`<p class="muted small">Or from a terminal: <span class="mono">gateway providers set ${p.provider}</span></p>`}
</section>`;
}

const setKeyDialog = html`<dialog id="set-key" class="modal" aria-labelledby="set-key-title">
  <form id="set-key-form" class="modal-body" autocomplete="off">
    <h2 id="set-key-title">Set the <span data-field="name"></span> key</h2>
    <p class="muted">The key goes once to the gateway, which stores it in your OS keychain. It is never shown again, here or anywhere.</p>
    <label class="field"><span>API key</span><input type="password" name="key" required autocomplete="off" spellcheck="false" placeholder="Paste the key from the provider's console"></label>
    <p class="form-error" role="alert" hidden></p>
    <div class="modal-actions">
      <button type="button" class="btn ghost" data-close>Cancel</button>
      <button type="submit" class="btn primary">Store in keychain</button>
    </div>
  </form>
</dialog>`;

export function providersPage(p: { keychain: KeychainView; providers: ProviderView[] }): Html {
  const kc = p.keychain;
  const configured = p.providers.filter((x) => x.configured).length;
  return html`<div class="page-head">
  <div><h1>Providers</h1><p class="sub">${configured} of ${p.providers.length} configured · Provider keys stay in the gateway; apps only ever see proxy keys.</p></div>
</div>
<div class="grid three">${p.providers.map((x) => card(x, kc))}</div>
<section class="card note-card">
  <h3>Where keys come from</h3>
  <p>In order: <span class="mono">GATEWAY_&lt;PROVIDER&gt;_API_KEY</span> in the daemon's environment, then the OS keychain, then — only if you chose <span class="mono">--insecure-storage</span> — a 0600 file in the state directory.</p>
  ${kc.available
    ? html`<p>Keychain: <strong>${kc.name}</strong>${kc.survivesReboot ? '' : html` <span class="badge expired">does not survive a reboot</span>`}</p>`
    : html`<p><span class="badge expired">No usable keychain</span> Keys can be set here only when one is available; from a terminal, <span class="mono">gateway providers set &lt;provider&gt; --insecure-storage</span> stores one in a 0600 file instead.</p>
  <details class="small muted"><summary>Why no keychain?</summary><p class="mono">${kc.error}</p></details>`}
</section>
${setKeyDialog}`;
}
