// Runs keychain operations in a short-lived child process, so the parent can kill it when the
// keychain hangs: @napi-rs/keyring connects to D-Bus synchronously when an entry is created, which
// blocks the event loop (no timer can fire), and a native call stuck in a thread also blocks
// process.exit. Protocol: one JSON request on stdin; JSON lines on stdout, `{"stage": id}` before
// each backend is touched and a final `{"done": …}`. Secrets travel only through the pipes.
// Self-contained and erasable TypeScript, so Node runs it from src/ (tests) as well as from dist/.

type Op = { op: 'get' | 'set' | 'delete'; account: string; secret?: string };
type Request = { service: string; stores: string[] | null; ops: Op[] };
type Result = { ok: true; value?: string | boolean | null } | { ok: false; error: string };
type Candidate = { id: string; store?: 'secret-service' | 'keyutils' };

const PROBE_ACCOUNT = '__probe__';

function send(obj: unknown): void {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

function message(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).replace(/\s*\n\s*/g, ' ').trim();
}

async function readRequest(): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Request;
}

function candidates(stores: string[] | null): Candidate[] {
  if (process.platform === 'darwin') return [{ id: 'macos-keychain' }];
  if (process.platform === 'win32') return [{ id: 'windows-credential-manager' }];
  const order = stores ?? ['secret-service', 'keyutils'];
  return order.map((s) => (s === 'keyutils' ? { id: 'linux-keyutils', store: 'keyutils' } : { id: 'secret-service', store: 'secret-service' }));
}

async function main(): Promise<void> {
  const req = await readRequest();
  const { AsyncEntry } = await import('@napi-rs/keyring');
  const entry = (c: Candidate, account: string) => new AsyncEntry(req.service, account, c.store ? { linux: { store: c.store } } : undefined);
  const problems: { id: string; message: string }[] = [];
  let chosen: Candidate | undefined;
  for (const c of candidates(req.stores)) {
    send({ stage: c.id });
    try {
      const e = entry(c, PROBE_ACCOUNT);
      // The kernel keyring can answer reads while refusing writes, so it is probed with a write.
      if (c.store === 'keyutils') {
        await e.setPassword('probe');
        await e.deleteCredential();
      } else {
        await e.getPassword();
      }
      chosen = c;
      break;
    } catch (err) {
      problems.push({ id: c.id, message: message(err) });
    }
  }
  const results: Result[] = [];
  if (chosen) {
    for (const op of req.ops) {
      try {
        const e = entry(chosen, op.account);
        if (op.op === 'get') results.push({ ok: true, value: await e.getPassword() });
        else if (op.op === 'set') { await e.setPassword(op.secret ?? ''); results.push({ ok: true }); }
        else results.push({ ok: true, value: await e.deleteCredential() });
      } catch (err) {
        results.push({ ok: false, error: message(err) });
      }
    }
  }
  send({ done: { backend: chosen?.id ?? null, problems, results } });
}

main().then(
  () => process.exit(0),
  (e: unknown) => { send({ done: { backend: null, problems: [{ id: 'helper', message: message(e) }], results: [] } }); process.exit(0); },
);
