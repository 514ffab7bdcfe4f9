// A streamed request answered from a whole answer: for a server whose streams lose tool calls
// (quirks.ts `toolsWithoutStreaming`, Ollama), the gateway calls it without streaming and gives
// the client the answer as the stream it asked for, in its own protocol, from its door's renderer.
// The upstream answer is complete when this runs, so the frames go out in one write.
import type { ServerResponse } from 'node:http';
import type { StreamRenderer } from '../../providers/ir/protocol.js';
import type { Response } from '../../providers/ir/types.js';
import { answerAsStreamEvents } from '../../providers/ir/answer-events.js';
import type { QuirkProfile } from '../../providers/quirks.js';
import type { BodyCapture } from '../observe/body-log.js';
import { SSE_HEADERS } from '../http/send.js';
import type { DoorRun } from './door.js';
import { irUsageToTokens } from '../observe/events.js';
import type { RequestTracker } from '../observe/tracker.js';

/**
 * Whether a streamed request is sent without streaming and its answer streamed to the client.
 * Such a request is translated even when the door speaks the provider's protocol: the door's
 * renderer makes the stream.
 */
export function wholeAnswerFor(run: DoorRun): boolean {
  const quirks = run.route.target.quirks;
  return quirks !== undefined && streamsFromWholeAnswer(quirks, run.stream, Array.isArray(run.body.tools) && run.body.tools.length > 0);
}

export function streamsFromWholeAnswer(q: QuirkProfile, stream: boolean, hasTools: boolean): boolean {
  return stream && hasTools && q.toolsWithoutStreaming;
}

export function sendAnswerAsStream(
  res: ServerResponse, renderer: StreamRenderer, answer: Response, tracker: RequestTracker, model: string, capture: BodyCapture | undefined,
  headers: Readonly<Record<string, string>> = SSE_HEADERS,
): void {
  let text = '';
  for (const ev of answerAsStreamEvents(answer)) text += renderer.push(ev);
  text += renderer.end();
  res.writeHead(200, headers);
  res.end(text);
  capture?.wrote(text);
  tracker.responseIsStream(true);
  tracker.wrote(text.length);
  tracker.finish(200, irUsageToTokens(answer.usage), answer.model ?? model);
}
