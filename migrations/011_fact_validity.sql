-- Up Migration

-- Facts are reconciled, not appended (docs/memory.md, "How facts are reconciled"): a fact is held
-- once, and a fact a later one superseded is kept with the time it stopped holding (Zep/Graphiti's
-- `invalid_at`), never recalled again.

-- The same fact, whatever its case, accents, spacing and punctuation: « Sa fille Claire vit à Lyon. »
-- and « sa fille claire vit a lyon » share a key. The one definition of "the same content": the
-- column below is generated from it, and the unique index holds on it. Only spaces and punctuation
-- are folded away (never letters the database's locale may not classify), so two texts in a script
-- other than Latin never collapse into one key.
CREATE FUNCTION kohami_fact_key(content text) RETURNS text
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$
    SELECT md5(btrim(regexp_replace(
      regexp_replace(replace(replace(lower(normalize(content, NFKD)), 'œ', 'oe'), 'æ', 'ae'), '[\u0300-\u036f\u200b-\u200d\u2060\ufeff]', '', 'g'),
      '[[:space:][:punct:]«»“”„‘’‹›…–—\u00a0\u202f]+', ' ', 'g')))
  $$;

ALTER TABLE memory_facts
  ADD COLUMN content_key text GENERATED ALWAYS AS (kohami_fact_key(fact)) STORED,
  -- Set when a later fact superseded this one (or it was found no longer true); null while it holds.
  ADD COLUMN invalid_at timestamptz;

-- The copies stored before reconciliation existed: the oldest of each senior's identical facts stays.
DELETE FROM memory_facts d
 USING memory_facts k
 WHERE d.senior_id = k.senior_id
   AND d.content_key = k.content_key
   AND (k.created_at, k.seq) < (d.created_at, d.seq);

-- At most one valid fact per senior and content: two sessions closing at once cannot both store it.
CREATE UNIQUE INDEX memory_facts_valid_content_idx ON memory_facts (senior_id, content_key) WHERE invalid_at IS NULL;
-- Recall, its chronological fallback and the reconciliation read only a senior's valid facts.
CREATE INDEX memory_facts_valid_senior_idx ON memory_facts (senior_id, embedding_model, created_at DESC, seq DESC) WHERE invalid_at IS NULL;
