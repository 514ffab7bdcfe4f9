// Runs `gateway chat`: finds the daemon, gets a short-lived key from it (ended when the chat ends;
// nothing is stored, so no keychain is needed), picks the model, then either answers once (a
// message argument or piped stdin, for scripts) or opens the interactive Ink chat.
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { readConfig, setLastChatModel } from '../../../daemon/store/config.js';
import { resolveModel } from '../../../providers/models.js';
import { BUILTIN_PROVIDERS } from '../../../providers/registry.js';
import { CliError, note } from '../../common.js';
import { clientUrl, findDaemon, notRunningMessage } from '../../daemon-client.js';
import { fetcherFor, localTrust } from '../../daemon-fetch.js';
import { themeFor } from '../common/theme.js';
import { ChatRequestError, createChatClient, type ChatClient, type ChatMessage } from './client.js';
import { gatewayCmd } from '../../invocation.js';
import { endOnSignals, openSessionKey } from '../../session-key.js';

export interface ChatOptions {
  dir: string;
  message?: string;
  model?: string;
  system?: string;
}

async function readStdin(): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of process.stdin as AsyncIterable<Buffer>) parts.push(c);
  return Buffer.concat(parts).toString('utf8');
}

/** --model, else the last model chat used, else the first configured provider's well-known model. */
async function pickModel(dir: string, client: ChatClient, explicit: string | undefined): Promise<string> {
  if (explicit) return explicit;
  const last = readConfig(dir).lastChatModel;
  if (last) return last;
  const { createSecretSource } = await import('../../../daemon/store/secret-source.js');
  const secrets = createSecretSource({ dir, env: process.env });
  for (const p of BUILTIN_PROVIDERS) if (await secrets.get(p.id).catch(() => undefined)) return p.defaultChatModel;
  // The daemon may hold keys this shell cannot see (its own environment): ask what it offers.
  const ids = await client.models().catch(() => [] as string[]);
  const first = BUILTIN_PROVIDERS.find((p) => ids.some((id) => id.startsWith(`${p.id}/`)));
  if (first) return first.defaultChatModel;
  throw new CliError(`no provider key is configured, so chat has no model to use; add one (${gatewayCmd('providers set anthropic')}) or pass --model`);
}

/** Refuses, before sending anything, a model name the gateway could not route (aliases read fresh). */
function checkModel(dir: string): (name: string) => string | undefined {
  return (name) => {
    try {
      resolveModel(name, readConfig(dir).aliases);
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  };
}

/** The next chat's default; written only when it changes. */
async function rememberModel(dir: string, model: string): Promise<void> {
  if (readConfig(dir).lastChatModel === model) return;
  await setLastChatModel(dir, model).catch(() => { /* a read-only config only loses the default */ });
}

export async function runChat(opts: ChatOptions): Promise<void> {
  const daemon = findDaemon(opts.dir);
  if (!daemon) throw new CliError(notRunningMessage());
  const piped = !process.stdin.isTTY;
  if (opts.message === undefined && !piped && !process.stdout.isTTY) {
    throw new CliError(`interactive chat needs a terminal; pass a message (${gatewayCmd('chat "…"')}) or pipe one in`);
  }
  if (opts.model) {
    const why = checkModel(opts.dir)(opts.model);
    if (why) throw new CliError(why);
  }
  let once: string | undefined; // the one message to answer, for scripts
  if (opts.message !== undefined || piped) {
    const input = piped ? await readStdin() : '';
    once = [opts.message, input.trim()].filter((t) => t !== undefined && t !== '').join('\n\n');
    if (!once) throw new CliError('nothing to send: the message and stdin are empty');
  }
  const session = await openSessionKey(opts.dir, 'chat');
  const offSignals = endOnSignals(session);
  try {
    await chat(opts, daemon.url, session.key, once);
  } finally {
    offSignals();
    await session.end();
  }
}

async function chat(opts: ChatOptions, daemonUrl: string, key: string, once: string | undefined): Promise<void> {
  // Found again for each request, so a chat outlives a daemon restart on another port (the key
  // is in the daemon's key store, so the new daemon knows it).
  const client = createChatClient(() => clientUrl(findDaemon(opts.dir)?.url ?? daemonUrl), key, () => fetcherFor(localTrust(findDaemon(opts.dir) ?? { url: daemonUrl })));
  const model = await pickModel(opts.dir, client, opts.model);
  if (once !== undefined) return answerOnce(client, model, opts.system, once, opts.dir);

  const [{ render }, { createElement }, { ChatApp }] = await Promise.all([import('ink'), import('react'), import('./app.js')]);
  const app = render(
    createElement(ChatApp, {
      client, model, system: opts.system ?? null, theme: themeFor(process.env),
      banner: `${gatewayCmd('chat')} · ${clientUrl(daemonUrl)} · /help for commands · ctrl-d to leave`,
      checkModel: checkModel(opts.dir),
      onModelUsed: (m: string) => { void rememberModel(opts.dir, m); },
      saveFile: async (path: string, content: string) => {
        const full = resolve(path.replace(/^~(?=$|\/)/, process.env.HOME ?? '~'));
        await writeFile(full, content, 'utf8');
        return full;
      },
    }),
    { exitOnCtrlC: false, maxFps: 30, kittyKeyboard: { mode: 'auto' } },
  );
  await app.waitUntilExit();
}

/** One question, the answer streamed to stdout as it arrives; Ctrl-C stops it (exit 130). */
async function answerOnce(client: ChatClient, model: string, system: string | undefined, text: string, dir: string): Promise<void> {
  const messages: ChatMessage[] = [...(system ? [{ role: 'system' as const, content: system }] : []), { role: 'user', content: text }];
  const ac = new AbortController();
  const onSigint = () => ac.abort();
  process.once('SIGINT', onSigint);
  let last = '';
  try {
    await client.stream(model, messages, (t) => { process.stdout.write(t); last = t; }, ac.signal);
    if (!last.endsWith('\n')) process.stdout.write('\n');
    await rememberModel(dir, model);
  } catch (e) {
    if (last && !last.endsWith('\n')) process.stdout.write('\n');
    if (ac.signal.aborted) { note('stopped'); process.exitCode = 130; return; }
    throw new CliError(e instanceof ChatRequestError ? e.message : `chat failed: ${(e as Error).message}`);
  } finally {
    process.off('SIGINT', onSigint);
  }
}
