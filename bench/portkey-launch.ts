// Starts Portkey's gateway (installed by the bench into a temp folder) bound to 127.0.0.1 only:
// its start-server.js calls server.listen(port, undefined, cb), i.e. every interface, with no option
// to change it, so the host is filled in here before it runs.
// Usage: node bench/portkey-launch.ts <path to build/start-server.js> --port=N --headless
import { Server } from 'node:net';
import { pathToFileURL } from 'node:url';

const listen = Server.prototype.listen;
Server.prototype.listen = function (this: Server, ...args: unknown[]) {
  if (typeof args[0] === 'number' && (args[1] === undefined || typeof args[1] === 'function')) {
    args.splice(1, args[1] === undefined ? 1 : 0, '127.0.0.1');
  }
  return (listen as (...a: unknown[]) => Server).apply(this, args);
} as typeof Server.prototype.listen;

console.clear = () => {};
// The bench waits for this line, then polls the port until Portkey answers.
process.stdout.write(JSON.stringify({ pid: process.pid }) + '\n');
await import(pathToFileURL(process.argv[2]!).href);
