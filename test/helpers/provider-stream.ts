// A provider's stream bytes read into IR events the way the pipeline reads them: one SseParser,
// one stream reader, both ended after the last piece.
import { SseParser } from '../../src/daemon/http/sse.js';
import type { ProviderProtocol, Target } from '../../src/providers/ir/protocol.js';
import type { StreamEvent } from '../../src/providers/ir/types.js';

export function readProviderStream(provider: ProviderProtocol, target: Target, chunks: Uint8Array[]): StreamEvent[] {
  const parser = new SseParser();
  const reader = provider.createStreamReader(target);
  const out: StreamEvent[] = [];
  for (const c of chunks) for (const ev of parser.push(c)) out.push(...reader.push(ev));
  for (const ev of parser.end()) out.push(...reader.push(ev));
  out.push(...reader.end());
  return out;
}
