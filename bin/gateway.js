#!/usr/bin/env node
// The `gateway` command. It checks the Node version against package.json `engines.node` (in plain
// JavaScript an old Node can run), then loads the compiled CLI lazily so a missing build gives a
// clear one-line error instead of a stack trace.
import { nodeVersionProblem } from './node-check.js';

const problem = nodeVersionProblem('gateway');
if (problem) {
  process.stderr.write('error: ' + problem + '\n');
  process.exit(1);
}
import('../dist/cli/main.js').then(
  (cli) => cli.run(process.argv),
  (e) => {
    const missing = e && e.code === 'ERR_MODULE_NOT_FOUND' && String(e.message).includes('dist');
    process.stderr.write(missing ? 'error: gateway is not built yet; run: npm run build\n' : `error: cannot load gateway: ${e && e.message}\n`);
    process.exit(1);
  },
);
