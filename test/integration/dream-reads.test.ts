import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgDreamRepository } from '../../adapters/postgres/pg-dream.repository.ts';
import { PgMoodScoresRepository } from '../../adapters/postgres/pg-mood-scores.repository.ts';
import { PgSegmentsRepository } from '../../adapters/postgres/pg-segments.repository.ts';
import { createSenior, migratedDatabase } from '../support/database.ts';

let db: Awaited<ReturnType<typeof migratedDatabase>>;
beforeAll(async () => {
  db = await migratedDatabase();
});
afterAll(() => db.close());

const DAY_MS = 86_400_000;

describe('what the nightly dream reads', () => {
  it('notesSince: the summaries from the window’s first instant on, oldest first, the summary-less scores left out', async () => {
    const senior = await createSenior(db);
    const moodScores = new PgMoodScoresRepository(db.pool);
    const note = (summary: string | null, recordedAt: string) => moodScores.insert({ seniorId: senior, score: 60, tier: 'neutre', summary, recordedAt: new Date(recordedAt) });
    await note('hier', '2026-11-23T10:00:00Z');
    await note('juste avant la fenêtre', '2026-11-16T23:59:59Z');
    await note('premier instant de la fenêtre', '2026-11-17T00:00:00Z');
    await note(null, '2026-11-20T10:00:00Z');
    await note('le jour même', '2026-11-24T08:00:00Z');
    expect(await moodScores.notesSince(senior, '2026-11-24T00:00:00Z', 7)).toEqual(['premier instant de la fenêtre', 'hier', 'le jour même']);
  });

  it('seniorsActiveInLastWeek: a senior with only a recent segment is active too; an old segment is not enough', async () => {
    const [recent, old] = [await createSenior(db), await createSenior(db)];
    const segments = new PgSegmentsRepository(db.pool);
    const segment = (seniorId: string, endedAt: Date) => segments.insert({ seniorId, summary: 'Une séance.', startedAt: endedAt, endedAt, turnCount: 3 });
    await segment(recent, new Date(Date.now() - DAY_MS));
    await segment(old, new Date(Date.now() - 8 * DAY_MS));
    const active = await new PgDreamRepository(db.pool).seniorsActiveInLastWeek();
    expect(active).toContain(recent);
    expect(active).not.toContain(old);
  });
});
