// model-gateway dashboard: the little script the server-rendered pages need. Writes go to the
// JSON admin API with the session's CSRF token; the Live page follows /admin/usage/live.
// Text from the server is only ever set with textContent, never parsed as markup.
(() => {
  'use strict';

  const $ = (sel, root = document) => root.querySelector(sel);
  const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
  const csrf = () => $('meta[name="csrf-token"]')?.getAttribute('content') ?? '';

  async function api(method, path, body) {
    const headers = { 'x-csrf-token': csrf(), accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
    let data = null;
    try { data = await res.json(); } catch { /* 204 or not JSON */ }
    if (res.status === 401) { location.href = '/dashboard/signed-out'; throw new Error('signed out'); }
    if (!res.ok) {
      const err = new Error(data?.error?.message ?? `HTTP ${res.status}`);
      err.field = data?.error?.field; // the request field that was wrong, when the API names one
      throw err;
    }
    return data;
  }

  let toastTimer;
  function toast(text, bad = false) {
    const t = $('#toast');
    if (!t) return;
    t.textContent = text;
    t.classList.toggle('bad', bad);
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.hidden = true; }, 3200);
  }

  function showError(scope, message) {
    const el = $('.form-error', scope);
    if (!el) { toast(message, true); return; }
    el.textContent = message;
    el.hidden = false;
  }
  function clearError(scope) {
    const el = $('.form-error', scope);
    if (el) el.hidden = true;
    for (const input of $$('[aria-invalid]', scope)) input.removeAttribute('aria-invalid');
  }

  function el(tag, props = {}, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else node.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }

  // ---- formatting (same rules as the server's format.ts) ----
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n) => String(n).padStart(2, '0');
  const trimNum = (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2)).replace(/\.?0+$/, '');
  function fmtCompact(n) {
    const a = Math.abs(n);
    if (a < 1e3) return String(Math.round(n));
    if (a < 1e6) return `${trimNum(n / 1e3)}k`;
    if (a < 1e9) return `${trimNum(n / 1e6)}M`;
    return `${trimNum(n / 1e9)}B`;
  }
  function fmtUsd(v) {
    if (v === null || v === undefined) return 'unknown';
    if (v === 0) return '$0.00';
    const a = Math.abs(v);
    if (a >= 100) return `$${v.toFixed(0)}`;
    if (a >= 1) return `$${v.toFixed(2)}`;
    if (a >= 0.01) return `$${v.toFixed(3)}`;
    return `$${v.toPrecision(2)}`;
  }
  function fmtMs(ms) {
    if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
    if (ms < 1) return '<1 ms';
    if (ms < 1000) return `${Math.round(ms)} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
    return `${Math.floor(ms / 60000)}m ${Math.round((ms % 60000) / 1000)}s`;
  }
  function fmtDateTime(ms) {
    const d = new Date(ms);
    return `${MONTHS[d.getMonth()]} ${d.getDate()}, ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  // ---- dialogs, copy, sign out ----
  document.addEventListener('click', async (e) => {
    const target = e.target instanceof Element ? e.target : null;
    if (!target) return;
    const open = target.closest('[data-open]');
    if (open) {
      const dialog = document.getElementById(open.getAttribute('data-open'));
      if (dialog) { resetDialog(dialog); dialog.showModal(); }
      return;
    }
    const close = target.closest('[data-close]');
    if (close) {
      close.closest('dialog')?.close();
      if (close.hasAttribute('data-reload')) location.reload();
      return;
    }
    const copy = target.closest('[data-copy]');
    if (copy) { await copyFrom($(copy.getAttribute('data-copy')), copy); return; }
    if (target.closest('[data-action="logout"]')) {
      try { await api('POST', '/admin/dashboard/logout'); } catch { /* signed out either way */ }
      location.href = '/dashboard/signed-out';
    }
  });

  function resetDialog(dialog) {
    for (const form of $$('form', dialog)) { form.reset(); form.hidden = false; clearError(form); }
    for (const extra of $$('#created-key', dialog)) extra.hidden = true;
  }

  async function copyFrom(input, button) {
    if (!input) return;
    const text = input.value;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      input.select();
      document.execCommand('copy');
    }
    const label = button.textContent;
    button.textContent = 'Copied ✓';
    setTimeout(() => { button.textContent = label; }, 1800);
  }

  // ---- Keys ----
  function initKeys() {
    const form = $('#create-key-form');
    if (form) {
      form.addEventListener('submit', async (e) => {
        e.preventDefault();
        clearError(form);
        const data = new FormData(form);
        const submit = $('button[type="submit"]', form);
        submit.disabled = true;
        try {
          const models = String(data.get('models') ?? '').split(',').map((m) => m.trim()).filter(Boolean);
          const body = { name: String(data.get('name') ?? '').trim(), expires: String(data.get('expires') ?? ''), models };
          // Limits left blank are not set; the API checks the others and names a wrong one.
          for (const f of ['budget', 'rpm', 'tpm', 'concurrency', 'tz']) {
            const v = String(data.get(f) ?? '').trim();
            if (v !== '') body[f] = v;
          }
          const res = await api('POST', '/admin/keys', body);
          const base = $('#keys-card')?.getAttribute('data-base-url') ?? location.origin;
          $('#new-key').value = res.key;
          $('#new-key-snippet').textContent = `export OPENAI_BASE_URL=${base}/v1\nexport OPENAI_API_KEY=${res.key}`;
          form.hidden = true;
          $('#created-key').hidden = false;
          $('#created-key [data-copy]')?.focus();
        } catch (err) {
          showError(form, err.message);
          const input = err.field ? $(`[name="${err.field}"]`, form) : null;
          if (input) { input.setAttribute('aria-invalid', 'true'); input.focus(); }
        } finally {
          submit.disabled = false;
        }
      });
      // Closing the dialog after a key was shown reloads the list (Escape included).
      $('#create-key')?.addEventListener('close', () => {
        const shown = $('#created-key');
        if (shown && !shown.hidden) { $('#new-key').value = ''; location.reload(); }
      });
    }
    const dialog = $('#revoke-key');
    let revoking = null;
    for (const b of $$('[data-revoke]')) {
      b.addEventListener('click', () => {
        revoking = b.getAttribute('data-revoke');
        $('[data-field="name"]', dialog).textContent = `“${b.getAttribute('data-name')}”`;
        clearError(dialog);
        dialog.showModal();
      });
    }
    $('#confirm-revoke')?.addEventListener('click', async (e) => {
      if (!revoking) return;
      e.target.disabled = true;
      try {
        const res = await api('POST', `/admin/keys/${encodeURIComponent(revoking)}/revoke`);
        dialog.close();
        toast(`Revoked “${res.key.name}”`);
        setTimeout(() => location.reload(), 400);
      } catch (err) {
        showError(dialog, err.message);
      } finally {
        e.target.disabled = false;
      }
    });
  }

  // ---- Providers ----
  function initProviders() {
    for (const b of $$('[data-test-provider]')) {
      b.addEventListener('click', async () => {
        const p = b.getAttribute('data-test-provider');
        const out = $(`[data-result="${p}"]`);
        b.disabled = true;
        const label = b.textContent;
        b.textContent = 'Testing…';
        out.hidden = false;
        out.className = 'test-result';
        out.textContent = 'Asking the provider…';
        try {
          const r = await api('POST', `/admin/providers/${p}/test`);
          out.className = `test-result ${r.ok ? 'ok' : 'bad'}`;
          out.textContent = `${r.ok ? '✓' : '✗'} ${r.message.charAt(0).toUpperCase()}${r.message.slice(1)}${r.latencyMs !== null ? ` · ${fmtMs(r.latencyMs)}` : ''}`;
        } catch (err) {
          out.className = 'test-result bad';
          out.textContent = `✗ ${err.message}`;
        } finally {
          b.disabled = false;
          b.textContent = label;
        }
      });
    }
    const dialog = $('#set-key');
    const form = $('#set-key-form');
    let provider = null;
    for (const b of $$('[data-set-key]')) {
      b.addEventListener('click', () => {
        provider = b.getAttribute('data-set-key');
        resetDialog(dialog);
        $('[data-field="name"]', dialog).textContent = b.getAttribute('data-name');
        dialog.showModal();
      });
    }
    form?.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearError(form);
      const input = $('input[name="key"]', form);
      const key = input.value;
      input.value = ''; // sent once; not kept in the page
      try {
        const r = await api('PUT', `/admin/providers/${provider}/key`, { key });
        dialog.close();
        toast(`Stored in ${r.backend}${r.warnings.length ? ` — note: ${r.warnings.join('; ')}` : ''}`);
        setTimeout(() => location.reload(), 900);
      } catch (err) {
        showError(form, err.message);
      }
    });
  }

  // ---- Usage ----
  function initUsage() {
    for (const s of $$('select[data-autosubmit]')) s.addEventListener('change', () => s.form.submit());
    // usage.logBodies: a "body" expander loads the stored (redacted, capped) bodies once, on first open.
    for (const d of $$('details[data-body]')) {
      d.addEventListener('toggle', async () => {
        if (!d.open || d.dataset.loaded) return;
        d.dataset.loaded = '1';
        try {
          const b = await api('GET', d.dataset.body);
          for (const [label, text] of [['Request', b.request], ['Response', b.response]]) {
            d.append(el('div', { class: 'muted small', text: label }), el('pre', { class: 'snippet body-text', text: text ?? '(none)' }));
          }
        } catch (err) {
          d.append(el('div', { class: 'form-error', text: err.message }));
        }
      });
    }
  }

  // ---- Live ----
  function initLive() {
    const tbody = $('#live-table tbody');
    const empty = $('#live-empty');
    const conn = $('#live-conn');
    const rows = new Map(); // id → { tr, data, done }
    const MAX_ROWS = 200;
    let paused = false;
    let pending = [];

    function setConn(state, label) {
      conn.setAttribute('data-state', state);
      $('.label', conn).textContent = label;
    }

    function modelCell(d) {
      const td = el('td', {}, el('span', { class: `prov-dot ${d.provider}`, title: d.provider }), el('span', { class: 'mono', text: d.model ?? '–' }));
      // A finished request names the model that served it; the name asked for, when another, beneath.
      if (d.requestedModel && d.requestedModel !== d.model) td.append(el('div', { class: 'muted small mono', title: 'the model the request asked for', text: `asked ${d.requestedModel}` }));
      return td;
    }

    function statusCell(d, done) {
      if (!done) {
        return el('td', {}, el('span', { class: 'badge pending' }, el('span', { class: 'spinner' }), d.ttfbMs === null ? 'waiting' : 'streaming'));
      }
      const ok = d.status < 400;
      return el('td', {}, el('span', { class: `badge ${ok ? 'ok' : 'error'}`, title: d.errorMessage ?? '', text: `${d.status}${!ok && d.errorCode ? ` ${d.errorCode}` : ''}` }));
    }

    // A finished request's cache reads and writes (parts of its input), when it had any.
    function cacheNote(d) {
      const read = d.cachedTokens ?? 0;
      const written = d.cacheWriteTokens ?? 0;
      if (read + written === 0) return null;
      return el('div', { class: 'muted small nowrap', 'data-cache-note': '', title: 'parts of the input', text: `${fmtCompact(read)} cache read · ${fmtCompact(written)} written` });
    }

    function render(entry) {
      const d = entry.data;
      const done = entry.done;
      const time = done ? d.startedAt : d.time;
      const duration = done ? d.durationMs : Date.now() - d.time;
      const tokens = done
        ? (d.inputTokens === null && d.outputTokens === null ? '–' : `${fmtCompact(d.inputTokens ?? 0)} / ${fmtCompact(d.outputTokens ?? 0)}`)
        : (d.outputTokens !== null ? `… / ${fmtCompact(d.outputTokens)}` : '…');
      const tr = el('tr', { 'data-request-id': done ? d.requestId : d.id },
        el('td', { class: 'nowrap', text: fmtDateTime(time) }),
        el('td', { text: d.keyName }),
        modelCell(d),
        el('td', {}, el('span', { class: 'tag', text: `${d.mode}${d.stream ? ' · stream' : ''}` })),
        statusCell(d, done),
        el('td', { class: 'num', text: fmtMs(d.ttfbMs) }),
        el('td', { class: 'num', 'data-elapsed': done ? '' : String(d.time), text: fmtMs(duration) }),
        el('td', { class: 'num' }, tokens, done ? cacheNote(d) : null),
        el('td', { class: 'num', text: done ? fmtUsd(d.cost) : '…' }),
      );
      if (entry.tr) entry.tr.replaceWith(tr); else tbody.prepend(tr);
      entry.tr = tr;
    }

    function add(id, data, done, fresh) {
      if (rows.has(id)) return;
      const entry = { data, done, tr: null };
      rows.set(id, entry);
      render(entry);
      if (fresh) entry.tr.classList.add('fresh');
      while (rows.size > MAX_ROWS) {
        const [oldId, old] = rows.entries().next().value;
        old.tr.remove();
        rows.delete(oldId);
      }
      update();
    }

    function apply(ev) {
      if (ev.type === 'started') { add(ev.request.id, ev.request, false, true); return; }
      const entry = rows.get(ev.id);
      if (ev.type === 'done') {
        if (!entry) { add(ev.id, ev.row, true, true); return; }
        entry.data = ev.row;
        entry.done = true;
        render(entry);
        update();
        return;
      }
      if (!entry || entry.done) return;
      if (ev.type === 'first_byte') entry.data.ttfbMs = ev.ttfbMs;
      if (ev.type === 'progress' && ev.outputTokens !== null) entry.data.outputTokens = ev.outputTokens;
      render(entry);
    }

    function update() {
      const since = Date.now() - 5 * 60000;
      let inflight = 0; let recent = 0; let errors = 0; let tokens = 0;
      for (const { data, done } of rows.values()) {
        if (!done) { inflight++; continue; }
        if (data.startedAt < since) continue;
        recent++;
        if (data.status >= 400) errors++;
        tokens += (data.inputTokens ?? 0) + (data.outputTokens ?? 0);
      }
      $('#live-inflight').textContent = String(inflight);
      $('#live-rpm').textContent = String(recent);
      $('#live-errors').textContent = String(errors);
      $('#live-tokens').textContent = fmtCompact(tokens);
      empty.hidden = rows.size > 0;
    }

    const init = JSON.parse($('#live-init').textContent);
    for (const r of init.recent.slice().reverse()) add(r.requestId, r, true, false);
    for (const r of init.inFlight) add(r.id, r, false, false);
    update();

    setInterval(() => {
      for (const td of $$('td[data-elapsed]', tbody)) {
        const t0 = Number(td.getAttribute('data-elapsed'));
        if (t0) td.textContent = fmtMs(Date.now() - t0);
      }
    }, 250);

    $('#live-pause').addEventListener('click', (e) => {
      paused = !paused;
      e.currentTarget.setAttribute('aria-pressed', String(paused));
      e.currentTarget.textContent = paused ? `Resume` : 'Pause';
      if (!paused) { for (const ev of pending) apply(ev); pending = []; }
    });

    const source = new EventSource('/admin/usage/live');
    source.addEventListener('open', () => setConn('open', 'Live'));
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED) setConn('closed', 'Disconnected — reload the page');
      else setConn('connecting', 'Reconnecting…');
    });
    source.addEventListener('snapshot', (m) => {
      const snap = JSON.parse(m.data);
      for (const r of snap.inFlight) add(r.id, r, false, false);
    });
    source.addEventListener('message', (m) => {
      const ev = JSON.parse(m.data);
      if (paused) { pending.push(ev); return; }
      apply(ev);
    });
  }

  const pages = { keys: initKeys, providers: initProviders, usage: initUsage, live: initLive };
  document.addEventListener('DOMContentLoaded', () => pages[document.body.dataset.page]?.());
})();
