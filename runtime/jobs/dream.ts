import type { PgDreamRepository } from '../../adapters/postgres/pg-dream.repository.ts';
import type { PgMemoryFactsRepository } from '../../adapters/postgres/pg-memory-facts.repository.ts';
import type { PgMoodScoresRepository } from '../../adapters/postgres/pg-mood-scores.repository.ts';
import type { PgProfilesRepository } from '../../adapters/postgres/pg-profiles.repository.ts';
import type { PgSegmentsRepository } from '../../adapters/postgres/pg-segments.repository.ts';
import type { MistralSmallConsolidator } from '../../adapters/subagents/mistral-small-consolidator.ts';
import { NOTES_KEPT_DAYS, PROMOTION_WINDOW_DAYS, recordSightings } from '../../machines/memory/dream.ts';
import type { ConsentPort, MemoryEmbedderPort, MemoryPort } from '../../machines/memory/memory.port.ts';
import { RECENT_SEGMENTS } from '../../machines/memory/tiers.ts';

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

/** The durable facts the consolidator is shown. */
const FACTS_SHOWN = 30;

const union = (a: readonly string[] | undefined, b: readonly string[]) => [...new Set([...(a ?? []), ...b])].slice(0, 30);

/** What a consolidation reads and writes through. */
export interface DreamDeps {
  store: PgDreamRepository;
  moodScores: PgMoodScoresRepository;
  segments: PgSegmentsRepository;
  facts: PgMemoryFactsRepository;
  consents: ConsentPort;
  memory: MemoryPort;
  embedder: MemoryEmbedderPort;
  profiles: PgProfilesRepository;
  consolidator: MistralSmallConsolidator;
  now?: () => Date;
}

/**
 * The nightly « dream » for one senior (seed « Il se souvient. Et il apprend. »): reads the
 * week's notes (per-turn summaries), recent segments, facts, profile and compass; Mistral Small
 * proposes patterns, hypotheses, continuity and the next session's preparation; recurring
 * patterns are promoted to durable facts; the compass and the interlocutor profile are written;
 * then hygiene — notes older than 30 days purged, segments past the 3 most recent vectorized.
 * Consent-gated, and once per Europe/Paris day: a re-run the same day changes nothing.
 */
export class Dream {
  private readonly deps: DreamDeps;

  constructor(deps: DreamDeps) {
    this.deps = deps;
  }

  async consolidate(seniorId: string, day: string): Promise<DreamReport> {
    const report: DreamReport = { seniorId, day, promoted: [], candidates: 0, compassWritten: false, profileEnriched: false, notesPurged: 0, segmentsVectorized: 0 };
    const { store } = this.deps;
    if (!(await this.deps.consents.hasConsent(seniorId, 'conversation'))) return { ...report, skipped: 'no consent' };
    if (await store.hasRun(seniorId, day)) return { ...report, skipped: 'already ran today' };

    const since = `${day}T00:00:00Z`;
    const notes = await this.deps.moodScores.notesSince(seniorId, since, PROMOTION_WINDOW_DAYS);
    const segments = (await this.deps.segments.recent(seniorId, RECENT_SEGMENTS)).map((s) => s.summary);
    const facts = await this.deps.facts.latest(seniorId, FACTS_SHOWN);
    const { interlocutor, compass } = await this.deps.profiles.profile(seniorId);

    if (notes.length > 0 || segments.length > 0) {
      const proposal = await this.deps.consolidator.propose({ notes, segments, facts, interlocutor, compass });
      const { candidates, promoted } = recordSightings(await store.candidates(seniorId), proposal.patterns, day, (this.deps.now?.() ?? new Date()).getTime());
      for (const p of promoted) await this.deps.memory.persist({ seniorId, content: p.pattern, category: p.category });
      await store.replaceCandidates(seniorId, candidates);
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

    report.notesPurged = await this.deps.moodScores.purgeNotes(seniorId, since, NOTES_KEPT_DAYS);
    report.segmentsVectorized = await this.vectorizeOldSegments(seniorId);
    await store.recordRun(seniorId, day, report);
    return report;
  }

  /** Tier 3: segments past the RECENT_SEGMENTS most recent are embedded, to be searched on demand. */
  private async vectorizeOldSegments(seniorId: string): Promise<number> {
    const { segments, embedder } = this.deps;
    const old = await segments.unembeddedBeyondRecent(seniorId, RECENT_SEGMENTS, embedder.modelId);
    if (old.length === 0) return 0;
    const vectors = await embedder.embed(old.map((r) => r.summary));
    await segments.setEmbeddings(
      old.map((r, i) => ({ id: r.id, embedding: vectors[i]! })),
      embedder.modelId,
    );
    return old.length;
  }
}
