// Keys with limits on a test gateway, and what their budget stands at once every claim settled.
import type { KeyLimits } from '../../src/daemon/limits/limits.js';
import type { Standing } from '../../src/daemon/limits/store.js';
import type { TestGateway } from './gateway.js';

/** A new key with `limits`, in force on the running daemon when this resolves. */
export async function limitedKey(gw: TestGateway, name: string, limits: KeyLimits): Promise<{ key: string; id: string }> {
  const { key, record } = gw.keys.create({ name, limits });
  await gw.daemon.reload();
  return { key, id: record.id };
}

/** The key's budget standing now. */
export async function budgetOf(gw: TestGateway, key: string): Promise<NonNullable<Standing['budget']>> {
  return (await gw.daemon.ctx.limits.standing(gw.daemon.ctx.keys.authenticate(key, 'openai')))!.budget!;
}

/** The key's budget once nothing is held any more (every request settled); waits for it. */
export async function settledBudget(gw: TestGateway, key: string): Promise<NonNullable<Standing['budget']>> {
  for (let i = 0; i < 500; i++) {
    const b = await budgetOf(gw, key);
    if (b.held === 0) return b;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the claim was never settled');
}
