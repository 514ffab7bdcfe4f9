// Host-speed probe: the machine is a VM whose host may be busy (other VMs), which slows every
// process on it without showing up as CPU used by anyone here. The bench keeps one of these on the
// daemon's core and runs the same loop itself on the load core; a step is only trusted when the
// loop runs at (close to) its best speed before and after it.
// Usage: node bench/probe.ts → reads a line per probe on stdin, answers the loop's time in ms.
import { createInterface } from 'node:readline';

export function spin(iterations = 3_000_000): number {
  const t0 = performance.now();
  let x = 0;
  for (let i = 0; i < iterations; i++) x = (x + (i & 7)) | 0;
  if (x === -1) process.stdout.write('');
  return performance.now() - t0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(JSON.stringify({ pid: process.pid }) + '\n');
  createInterface({ input: process.stdin }).on('line', () => {
    process.stdout.write(`${Math.min(spin(), spin()).toFixed(3)}\n`);
  });
}
