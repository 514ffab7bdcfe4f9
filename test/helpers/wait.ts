// Waiting for a condition instead of for a time: `probe` is asked every `everyMs` until it gives
// something truthy, which is returned; after `ms`, an error naming what never happened.
export async function until<T>(what: string, probe: () => Promise<T | undefined | false> | T | undefined | false, ms = 30_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
