import type pg from 'pg';
import pgvector from 'pgvector';
import type { PgProfilesRepository } from '../../adapters/postgres/pg-profiles.repository.ts';
import type { MistralSmallConsolidator } from '../../adapters/subagents/mistral-small-consolidator.ts';
import { NOTES_KEPT_DAYS, PROMOTION_WINDOW_DAYS, recordSightings, type Candidate } from '../../machines/memory/dream.ts';
import type { ConsentPort, FactCategory, MemoryEmbedderPort, MemoryPort } from '../../machines/memory/memory.port.ts';

export interface DreamReport {
  seniorId: string;
  day: string;
  skipped?: 'no consent' | 'already ran today';
  promoted: string[];
  candidates: number;
  compassWritten: boolean;
  profileEnriched: boolean;
  notesPurged: number;
  segmentsVectorized: number;
}

const union = (a: readonly string[] | undefined, b: readonly string[]) => [...new Set([...(a ?? []), ...b])].slice(0, 30);

/**
 * The nightly « dream » for one senior (seed « Il se souvient. Et il apprend. »): reads the
 * week's notes (per-turn summaries), recent segments, facts, profile and compass; Mistral Small
 * proposes patterns, hypotheses, continuity and the next session's preparation; recurring
 * patterns are promoted to durable facts; the compass and the interlocutor profile are written;
 * then hygiene — notes older than 30 days purged, segments past the 3 most recent vectorized.
 * Consent-gated, and once per Europe/Paris day: a re-run the same day changes nothing.
 */
export class Dream {
  constructor(
    private readonly deps: {
      pool: pg.Pool;
      consents: ConsentPort;
      memory: MemoryPort;
      embedder: MemoryEmbedderPort;
      profiles: PgProfilesRepository;
      consolidator: MistralSmallConsolidator;
      now?: () => Date;
    },
  ) {}

  async consolidate(seniorId: string, day: string): Promise<DreamReport> {
    const report: DreamReport = { seniorId, day, promoted: [], candidates: 0, compassWritten: false, profileEnriched: false, notesPurged: 0, segmentsVectorized: 0 };
    const { pool } = this.deps;
    if (!(await this.deps.consents.hasConsent(seniorId, 'conversation'))) return { ...report, skipped: 'no consent' };
    const ran = await pool.query('SELECT 1 FROM consolidation_runs WHERE senior_id = $1 AND day = $2', [seniorId, day]);
    if ((ran.rowCount ?? 0) > 0) return { ...report, skipped: 'already ran today' };

    const since = `${day}T00:00:00Z`;
    const notes = await pool.query<{ summary: string }>(
      `SELECT summary FROM mood_scores WHERE senior_id = $1 AND summary IS NOT NULL AND recorded_at >= $2::timestamptz - make_interval(days => $3) ORDER BY recorded_at`,
      [seniorId, since, PROMOTION_WINDOW_DAYS],
    );
    const segments = await pool.query<{ summary: string }>('SELECT summary FROM segments WHERE senior_id = $1 AND summary IS NOT NULL ORDER BY ended_at DESC LIMIT 3', [seniorId]);
    const facts = await pool.query<{ fact: string }>('SELECT fact FROM memory_facts WHERE senior_id = $1 ORDER BY created_at DESC LIMIT 30', [seniorId]);
    const { interlocutor, compass } = await this.deps.profiles.profile(seniorId);

    if (notes.rows.length > 0 || segments.rows.length > 0) {
      const proposal = await this.deps.consolidator.propose({
        notes: notes.rows.map((r) => r.summary),
        segments: segments.rows.map((r) => r.summary),
        facts: facts.rows.map((r) => r.fact),
        interlocutor,
        compass,
      });
      const stored = await pool.query<{ pattern: string; category: FactCategory; seen_on: string[]; created_at: Date }>(
        `SELECT pattern, category, to_json(seen_on)::jsonb AS seen_on, created_at FROM consolidation_candidates WHERE senior_id = $1`,
        [seniorId],
      );
      const { candidates, promoted } = recordSightings(
        stored.rows.map((r) => ({ pattern: r.pattern, category: r.category, seenOn: r.seen_on, createdAt: r.created_at.getTime() })),
        proposal.patterns,
        day,
        (this.deps.now?.() ?? new Date()).getTime(),
      );
      for (const p of promoted) await this.deps.memory.persist({ seniorId, content: p.pattern, category: p.category });
      await this.replaceCandidates(seniorId, candidates);
      report.promoted = promoted.map((p) => p.pattern);
      report.candidates = candidates.length;

      await this.deps.profiles.save(seniorId, {
        compass: {
          ...(proposal.nextSession.resumeWith ? { resumeWith: proposal.nextSession.resumeWith } : {}),
          questionsToAsk: proposal.nextSession.questionsToAsk,
          avoid: proposal.nextSession.avoid,
          uncertainties: proposal.compass.uncertainties,
          ...(proposal.compass.tone ? { tone: proposal.compass.tone } : {}),
          topicsToExplore: proposal.compass.topicsToExplore,
        },
        interlocutor: {
          ...((proposal.interlocutor.role ?? interlocutor.role) ? { role: (proposal.interlocutor.role ?? interlocutor.role)! } : {}),
          interests: union(interlocutor.interests, proposal.interlocutor.interests),
          recurringTopics: union(interlocutor.recurringTopics, proposal.interlocutor.recurringTopics),
          patterns: union(interlocutor.patterns, proposal.interlocutor.patterns),
        },
      });
      report.compassWritten = true;
      report.profileEnriched = true;
    }

    report.notesPurged =
      (
        await pool.query(`UPDATE mood_scores SET summary = NULL WHERE senior_id = $1 AND summary IS NOT NULL AND recorded_at < $2::timestamptz - make_interval(days => $3)`, [
          seniorId,
          since,
          NOTES_KEPT_DAYS,
        ])
      ).rowCount ?? 0;
    report.segmentsVectorized = await this.vectorizeOldSegments(seniorId);
    await pool.query('INSERT INTO consolidation_runs (senior_id, day, report) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [seniorId, day, JSON.stringify(report)]);
    return report;
  }

  /** Tier 3: segments past the 3 most recent are embedded, to be searched on demand. */
  private async vectorizeOldSegments(seniorId: string): Promise<number> {
    const old = await this.deps.pool.query<{ id: string; summary: string }>(
      `SELECT id, summary FROM segments WHERE senior_id = $1 AND summary IS NOT NULL
          AND id NOT IN (SELECT id FROM segments WHERE senior_id = $1 AND summary IS NOT NULL ORDER BY ended_at DESC LIMIT 3)
          AND (embedding IS NULL OR embedding_model <> $2)`,
      [seniorId, this.deps.embedder.modelId],
    );
    if (old.rows.length === 0) return 0;
    const vectors = await this.deps.embedder.embed(old.rows.map((r) => r.summary));
    for (const [i, row] of old.rows.entries()) {
      await this.deps.pool.query('UPDATE segments SET embedding = $2::vector, embedding_model = $3 WHERE id = $1', [row.id, pgvector.toSql(vectors[i]!), this.deps.embedder.modelId]);
    }
    return old.rows.length;
  }

  private async replaceCandidates(seniorId: string, candidates: Candidate[]): Promise<void> {
    await this.deps.pool.query('DELETE FROM consolidation_candidates WHERE senior_id = $1', [seniorId]);
    for (const c of candidates) {
      await this.deps.pool.query('INSERT INTO consolidation_candidates (senior_id, pattern, category, seen_on, created_at) VALUES ($1, $2, $3, $4::date[], $5)', [
        seniorId,
        c.pattern,
        c.category,
        c.seenOn,
        new Date(c.createdAt),
      ]);
    }
  }
}
