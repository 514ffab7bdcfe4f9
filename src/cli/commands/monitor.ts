// `gateway monitor`: every request and stream through the running gateway, live.
import type { Command } from 'commander';
import { cliStateDir } from '../common.js';
import { gatewayCmd } from '../invocation.js';

export function registerMonitor(program: Command): void {
  program.command('monitor')
    .description('watch every request and stream through the running gateway, live')
    .option('--json', 'print one JSON line per finished request instead of the table (the default when stdout is not a terminal)')
    .addHelpText('after', `
Keys: ↑/↓ select a request, enter shows its details (timings, usage, error, headers with
credentials masked), f filters (provider:openai key:chat status:4xx model:gpt, -term excludes),
p pauses, c clears, ? help, q quits. Colours follow NO_COLOR.

It waits for a gateway that is not running yet and reconnects when it restarts. With --json, it
needs a running gateway and prints lines like:
  {"id":"req_…","time":"…","key":"env","provider":"openai","model":"gpt-5.4","status":200,"ok":true,"durationMs":812.4,"usage":{…}}
e.g. ${gatewayCmd('monitor --json')} | jq -c 'select(.ok | not)'`)
    .action(async (opts: { json?: boolean }) => {
      const { runMonitor } = await import('../ui/monitor/run.js');
      await runMonitor({ dir: cliStateDir(), json: opts.json });
    });
}
