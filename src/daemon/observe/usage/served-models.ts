// One model, one row. A provider answers a requested name (`claude-sonnet-4-5`) with the model it
// serves (`claude-sonnet-4-5-20250929`), and usage is grouped and priced by the served one. A
// request that failed before the provider said which model it was is grouped with the model its
// name last resolved to, so its error lands in the same row as its successes. Learned from the
// answers as they are recorded, and at start from the newest recorded ones.
import type { Database } from '../../store/sqlite.js';

/** Names remembered; the oldest learned is forgotten past this. */
const MAX_NAMES = 1000;
/** Recorded answers read at start. */
const SEED_ROWS = 500;

export class ServedModels {
  private readonly byName = new Map<string, string>();

  /** `requested` was answered by `served` at `provider`. */
  learn(provider: string, requested: string | null, served: string | null): void {
    if (!requested || !served) return;
    const k = `${provider}/${requested}`;
    if (requested === served) { this.byName.delete(k); return; }
    if (this.byName.get(k) === served) return;
    this.byName.delete(k);
    if (this.byName.size >= MAX_NAMES) this.byName.delete(this.byName.keys().next().value!);
    this.byName.set(k, served);
  }

  /** The model that last answered `requested` at `provider`, if it was another name. */
  servedFor(provider: string, requested: string): string | undefined {
    return this.byName.get(`${provider}/${requested}`);
  }

  /** Seeded from the newest successful answers whose served model differs from the name asked for. */
  static fromHistory(db: Database, log: (line: string) => void = () => {}): ServedModels {
    const names = new ServedModels();
    try {
      const rows = db.prepare(`SELECT provider, requested_model AS requested, model FROM requests
        WHERE id IN (SELECT id FROM requests ORDER BY started_at DESC LIMIT ?)
          AND status < 400 AND requested_model IS NOT NULL AND model IS NOT NULL AND requested_model <> model
        ORDER BY started_at`).all(SEED_ROWS) as Array<{ provider: string; requested: string; model: string }>;
      for (const r of rows) names.learn(r.provider, r.requested, r.model); // oldest first: the newest wins
    } catch (e) {
      log(`usage: could not read which models answered recently (${(e as Error).message})`);
    }
    return names;
  }
}
