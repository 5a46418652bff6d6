-- Up Migration

-- One row per derived mood capture; `summary` is a 2–3 sentence third-person synthesis, never the transcript.
CREATE TABLE mood_scores (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  senior_id uuid NOT NULL REFERENCES seniors (id) ON DELETE CASCADE,
  score smallint NOT NULL CHECK (score BETWEEN 0 AND 100),
  tier text NOT NULL CHECK (tier IN ('preoccupant', 'melancolique', 'neutre', 'enjoue')),
  source text NOT NULL CHECK (source IN ('per_turn')),
  summary text CHECK (length(summary) <= 1000),
  recorded_at timestamptz NOT NULL DEFAULT now()
);
-- The caregiver dashboard's keyset: (recorded_at DESC, id DESC) within one senior.
CREATE INDEX mood_scores_keyset_idx ON mood_scores (senior_id, recorded_at DESC, id DESC);

-- Which seniors a caregiver token may read (INV-P05).
CREATE TABLE caregiver_seniors (
  caregiver_id uuid NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
  senior_id uuid NOT NULL REFERENCES seniors (id) ON DELETE CASCADE,
  PRIMARY KEY (caregiver_id, senior_id)
);
CREATE INDEX caregiver_seniors_senior_idx ON caregiver_seniors (senior_id);
