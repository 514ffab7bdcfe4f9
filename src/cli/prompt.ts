// Reading a secret: from stdin (`--stdin`), or from a hidden prompt on the terminal (no echo).
import { CliError } from './common.js';

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Prompts on stderr and reads one line from the terminal without echoing it. */
export function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) throw new CliError('no terminal to prompt on; pipe the key in with --stdin');
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let value = '';
    stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    stdin.resume();
    const finish = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.removeListener('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (data: string) => {
      for (const ch of data) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish();
        if (ch === '\u0003') return finish(new CliError('cancelled', 130));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** Drops the line break a pipe or `echo` adds; everything else is checked, not silently fixed. */
export function cleanSecretInput(raw: string, what: string): string {
  const value = raw.replace(/[\r\n]+$/, '');
  if (!value) throw new CliError(`no ${what} given (empty input)`);
  if (/\s/.test(value)) throw new CliError(`the ${what} contains whitespace or a line break; give only the key itself`);
  return value;
}

/** At most the last four characters, and none of a short value. */
export function lastFour(secret: string): string {
  return secret.length >= 12 ? `…${secret.slice(-4)}` : '…';
}
