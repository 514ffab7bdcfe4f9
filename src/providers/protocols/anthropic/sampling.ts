// Claude models released after Opus 4.6 fix their own sampling: `temperature` is accepted only at
// 1.0, `top_p` only at ≥ 0.99, and any `top_k` is a 400 (provider-reference.md §2.1). An OpenAI
// client (SDKs and frameworks often send temperature by default) would get that 400 for a value
// the model cannot honour anyway, so these fields are not sent to such models (§4.1: "drop").

/** Ids the SDK lists as released after claude-opus-4-6 that carry no version number. */
const LATER_UNVERSIONED = new Set(['claude-mythos-preview']);

/** True when `model` (an Anthropic id, no provider prefix) fixes its own sampling. */
export function fixedSampling(model: string): boolean {
  if (LATER_UNVERSIONED.has(model)) return true;
  // claude-<family>-<major>[-<minor>][-<date>], e.g. claude-opus-4-7, claude-sonnet-5, claude-opus-5-20260724
  const m = /^claude-[a-z]+-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?$/.exec(model);
  if (!m) return false;
  const major = Number(m[1]);
  const minor = m[2] === undefined ? 0 : Number(m[2]);
  return major > 4 || (major === 4 && minor >= 7);
}
