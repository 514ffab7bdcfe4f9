// `gateway chat`: talk to any configured model through the running gateway's unified endpoint.
import type { Command } from 'commander';
import { cliStateDir } from '../common.js';

export function registerChat(program: Command): void {
  program.command('chat')
    .description('chat with a model through the running gateway (interactive, or one answer for scripts)')
    .argument('[message]', 'answer this one message and exit (stdin, when piped, is appended to it)')
    .option('-m, --model <name>', 'model or alias, e.g. anthropic/claude-opus-5, gpt-5.4, gemini-3.5-flash (default: the last one chat used, else the first configured provider\'s)')
    .option('-s, --system <text>', 'system prompt')
    .option('--insecure-storage', 'when creating the chat key, keep its plaintext in the 0600 insecure file instead of the keychain')
    .addHelpText('after', `
In the chat: /model <name> switches model (the conversation is kept), /models lists them,
/system <text|off>, /clear, /save <file> (the transcript as JSON), /help, /exit or Ctrl-D.
Enter sends; Shift-Enter, Alt-Enter, Ctrl-J or a trailing \\ start a new line; ↑/↓ recall
earlier inputs; Ctrl-C stops an answer (and the provider request), not the program.

Chat uses a client key of its own named "chat", created on first use and kept in the keychain
like gateway env's (revoke it with: gateway keys revoke chat).

Examples:
  gateway chat
  gateway chat -m gemini-3.5-flash "Say hi in French"
  git diff | gateway chat "Write a commit message for this diff"`)
    .action(async (message: string | undefined, opts: { model?: string; system?: string; insecureStorage?: boolean }) => {
      const { runChat } = await import('../ui/chat/run.js');
      await runChat({ dir: cliStateDir(), message, model: opts.model, system: opts.system, insecureStorage: opts.insecureStorage });
    });
}
