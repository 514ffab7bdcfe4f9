// Summarizes a V8 .cpuprofile (from node --cpu-prof): self time by function and by file, and
// inclusive ("total") time of the functions of the project's own files.
// Usage: node bench/profile-summary.ts <file.cpuprofile> [top N]
import { readFileSync } from 'node:fs';

interface CallFrame { functionName: string; url: string; lineNumber: number; columnNumber: number }
interface Node { id: number; callFrame: CallFrame; hitCount?: number; children?: number[] }
interface Profile { nodes: Node[]; startTime: number; endTime: number; samples: number[]; timeDeltas: number[] }

export function summarize(file: string, top = 30): string {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Self time per node from samples × deltas (µs).
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) self.set(p.samples[i]!, (self.get(p.samples[i]!) ?? 0) + (p.timeDeltas[i] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const idle = [...self.entries()].filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)').reduce((a, [, v]) => a + v, 0);
  const busy = total - idle;

  const short = (url: string) => url.replace(/^file:\/\/.*?\/(bench\/\.build|dist|node_modules)\//, '$1/').replace(/^file:\/\/.*\/bench\//, 'bench/');
  const label = (f: CallFrame) => `${f.functionName || '(anonymous)'} ${f.url ? `${short(f.url)}:${f.lineNumber + 1}` : ''}`.trim();
  const fileOf = (f: CallFrame) => (f.url ? short(f.url) : f.functionName.startsWith('(') ? f.functionName : '(native/builtin)');

  const fnSelf = new Map<string, number>();
  const fileSelf = new Map<string, number>();
  for (const [id, us] of self) {
    const f = byId.get(id)!.callFrame;
    if (f.functionName === '(idle)') continue;
    fnSelf.set(label(f), (fnSelf.get(label(f)) ?? 0) + us);
    fileSelf.set(fileOf(f), (fileSelf.get(fileOf(f)) ?? 0) + us);
  }
  // Inclusive time per project function (counted once per sample even when recursive).
  const incl = new Map<string, number>();
  const isOwn = (url: string) => /\/(bench\/\.build|dist)\/(daemon|providers)\//.test(url);
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const f = byId.get(n)!.callFrame;
      if (!isOwn(f.url)) continue;
      const l = label(f);
      if (seen.has(l)) continue;
      seen.add(l);
      incl.set(l, (incl.get(l) ?? 0) + us);
    }
  }
  const pctOf = (us: number) => `${((100 * us) / busy).toFixed(1)}%`;
  const table = (title: string, m: Map<string, number>, n: number) => [
    `### ${title}`, '', '| share of busy CPU | ms | where |', '|---:|---:|---|',
    ...[...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n).map(([k, v]) => `| ${pctOf(v)} | ${(v / 1000).toFixed(0)} | \`${k}\` |`), '',
  ].join('\n');
  return [
    `Profile ${file}: ${(total / 1e6).toFixed(1)} s sampled, ${(busy / 1e6).toFixed(1)} s busy.`, '',
    table('Self time by file', fileSelf, 20),
    table('Self time by function', fnSelf, top),
    table('Inclusive time of the daemon\'s own functions', incl, top),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(summarize(process.argv[2]!, Number(process.argv[3] ?? 30)) + '\n');
}
