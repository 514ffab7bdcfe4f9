// Pages shown without a session: how to sign in (an admin key, from anywhere the daemon is
// reachable; a one-time link from `gateway dashboard`, on its machine), a spent or expired link, a
// refused key, and the hop after a successful sign-in (a same-origin refresh, so the
// SameSite=Strict cookie is sent on arrival).
import { html } from './html.js';
import { plainPage } from './layout.js';

export function signInPage(reason: 'none' | 'expired' | 'signed-out' | 'bad-key', detail?: string): string {
  const lead = reason === 'expired'
    ? html`<h1>This sign-in link has expired</h1><p>Sign-in links work once, for ten minutes.</p>`
    : reason === 'signed-out'
      ? html`<h1>You are signed out</h1><p>The dashboard session has ended.</p>`
      : reason === 'bad-key'
        ? html`<h1>That key did not sign you in</h1><p class="error" data-signin-error>${detail ?? 'not an admin key'}</p>`
        : html`<h1>Sign in to the dashboard</h1><p>Sign in with an admin key, or with a one-time link from the gateway's own machine.</p>`;
  return plainPage('Sign in', html`${lead}
  <form method="post" action="/dashboard/login" class="signin" autocomplete="off">
    <label class="field"><span>Admin key</span>
      <input type="password" name="key" required placeholder="sk-gwadmin-…" autofocus></label>
    <button type="submit" class="btn primary">Sign in</button>
  </form>
  <p class="muted small">An admin key is made on the gateway's machine: <span class="mono">gateway keys create --admin --name &lt;you&gt;</span>.</p>
  <p>On the gateway's machine, this opens a fresh one-time link instead:</p>
  <pre class="snippet mono">gateway dashboard</pre>
  <p class="muted small">Use <span class="mono">gateway dashboard --no-open</span> to print the link instead of opening a browser.</p>`, 'same-origin');
}

export function signedInHop(target: string): string {
  return plainPage('Signing in', html`<meta http-equiv="refresh" content="0;url=${target}">
  <h1>Signing you in…</h1><p><a href="${target}">Continue to the dashboard</a></p>`);
}
