// `gateway chat`: talk to any configured model through the running gateway's unified endpoint.
import { Option, type Command } from 'commander';
import { cliStateDir, note } from '../common.js';
import { gatewayCmd } from '../invocation.js';

export function registerChat(program: Command): void {
  program.command('chat')
    .description('chat with a model through the running gateway (interactive, or one answer for scripts)')
    .argument('[message]', 'answer this one message and exit (stdin, when piped, is appended to it)')
    .option('-m, --model <name>', 'model or alias, e.g. anthropic/claude-opus-5, gpt-5.4, gemini-3.5-flash (default: the last one chat used, else the first configured provider\'s)')
    .option('-s, --system <text>', 'system prompt')
    // Earlier versions stored a chat key; the option is accepted, and says it is unused.
    .addOption(new Option('--insecure-storage').hideHelp())
    .addHelpText('after', `
In the chat: /model <name> switches model (the conversation is kept), /models lists them,
/system <text|off>, /clear, /save <file> (the transcript as JSON), /help, /exit or Ctrl-D.
Enter sends; Shift-Enter, Alt-Enter, Ctrl-J or a trailing \\ start a new line; ↑/↓ recall
earlier inputs; Ctrl-C stops an answer (and the provider request), not the program.

Chat needs a running gateway, which gives it a short-lived key for as long as it runs: nothing is
stored, so no keychain is needed (it shows in keys list as chat.<id>).

Examples:
  ${gatewayCmd('chat')}
  ${gatewayCmd('chat -m gemini-3.5-flash "Say hi in French"')}
  git diff | ${gatewayCmd('chat "Write a commit message for this diff"')}`)
    .action(async (message: string | undefined, opts: { model?: string; system?: string; insecureStorage?: boolean }) => {
      if (opts.insecureStorage) note('note: --insecure-storage is no longer needed: chat stores no key');
      const { runChat } = await import('../ui/chat/run.js');
      await runChat({ dir: cliStateDir(), message, model: opts.model, system: opts.system });
    });
}
