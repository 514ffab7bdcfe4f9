// Preloaded with `node --import` by the help test: reports on stderr every ink or react module loaded.
import { registerHooks } from 'node:module';

registerHooks({
  resolve(specifier, context, next) {
    const r = next(specifier, context);
    if (/\/node_modules\/(ink|react|react-reconciler)\//.test(r.url)) process.stderr.write(`LOADED ${r.url}\n`);
    return r;
  },
});
