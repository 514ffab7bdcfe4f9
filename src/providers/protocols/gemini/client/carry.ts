// Where reasoning state goes in a rendered answer (thought-signature.ts says why): reasoning that
// has state waits here until the next text or function call part, whose `thoughtSignature` then
// carries it, with that part's own state. Used by the answer and the stream renderers alike.
import type { ProviderState, ReasoningPart } from '../../../ir/types.js';
import { encodeThoughtSignature } from './thought-signature.js';

export class Carry {
  private pending: ReasoningPart[] = [];

  /** Reasoning that ended; kept only when it has state (text alone means nothing to a provider). */
  reasoning(part: ReasoningPart): void {
    if (part.state !== undefined) this.pending.push(part);
  }

  get waiting(): boolean {
    return this.pending.length > 0;
  }

  /** The signature for the next part (with its own state), or undefined when there is nothing to carry. */
  take(state: ProviderState | undefined): string | undefined {
    if (this.pending.length === 0 && state === undefined) return undefined;
    const signature = encodeThoughtSignature({ reasoning: this.pending, ...(state === undefined ? {} : { state }) });
    this.pending = [];
    return signature;
  }
}
