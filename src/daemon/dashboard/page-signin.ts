// Pages shown without a session: how to sign in, a spent or expired link, and the hop after a
// successful sign-in (a same-origin refresh, so the SameSite=Strict cookie is sent on arrival).
import { html } from './html.js';
import { plainPage } from './layout.js';

export function signInPage(reason: 'none' | 'expired' | 'signed-out'): string {
  const lead = reason === 'expired'
    ? html`<h1>This sign-in link has expired</h1><p>Sign-in links work once, for ten minutes.</p>`
    : reason === 'signed-out'
      ? html`<h1>You are signed out</h1><p>The dashboard session has ended.</p>`
      : html`<h1>Sign in to the dashboard</h1><p>The dashboard is only reachable with a one-time link from the gateway on this machine.</p>`;
  return plainPage('Sign in', html`${lead}
  <p>Run this in a terminal to open a fresh link:</p>
  <pre class="snippet mono">gateway dashboard</pre>
  <p class="muted small">Use <span class="mono">gateway dashboard --no-open</span> to print the link instead of opening a browser.</p>`);
}

export function signedInHop(target: string): string {
  return plainPage('Signing in', html`<meta http-equiv="refresh" content="0;url=${target}">
  <h1>Signing you in…</h1><p><a href="${target}">Continue to the dashboard</a></p>`);
}
