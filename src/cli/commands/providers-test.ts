// `gateway providers test <name>`: runs provider-probe.ts from the CLI, with the key the gateway
// would use (environment, keychain or insecure file) and the same upstream client, so it works
// whether or not a gateway is running. Exit 0 when the provider works, 1 when it does not.
import { provider as descriptor } from '../../providers/registry.js';
import { cliStateDir, out, printJson } from '../common.js';
import { gatewayCmd } from '../invocation.js';

export async function testProvider(name: string, opts: { model?: string; json?: boolean }): Promise<void> {
  const d = descriptor(name);
  const [{ createSecretSource }, { probeProvider }, { Upstreams, originsFromEnv }] = await Promise.all([
    import('../../daemon/store/secret-source.js'), import('../../daemon/admin/provider-probe.js'), import('../../daemon/relay/upstream.js'),
  ]);
  let key = '';
  if (d.auth) {
    const secret = await createSecretSource({ dir: cliStateDir(), env: process.env }).get(d.id);
    if (!secret) {
      const summary = `no key: ${d.id} needs one (${gatewayCmd(`providers set ${d.id}`)}, or ${d.keyEnv})`;
      if (opts.json) printJson({ provider: d.id, verdict: 'no_key', summary, steps: [], models: null, model: null });
      else out(`${d.id}: ${summary}`);
      process.exitCode = 1;
      return;
    }
    key = secret.key;
  }
  const upstreams = new Upstreams(originsFromEnv(process.env));
  try {
    const r = await probeProvider({ upstreams, provider: d.id, key, ...(opts.model ? { model: opts.model } : {}) });
    if (opts.json) printJson(r);
    else {
      for (const s of r.steps) out(`  ${s.ok ? 'ok  ' : 'FAIL'}  ${s.step === 'models' ? 'models list ' : 'test request'}  ${s.detail}`);
      out(`${d.id}: ${r.summary}`);
    }
    if (r.verdict !== 'ok') process.exitCode = 1;
  } finally {
    await upstreams.close();
  }
}
