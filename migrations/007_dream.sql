-- Up Migration

-- The nightly dream's candidate patterns: promoted to a durable fact once seen on 3 days
-- within 7; at most 30 per senior (the oldest drops out).
CREATE TABLE consolidation_candidates (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  senior_id uuid NOT NULL REFERENCES seniors (id) ON DELETE CASCADE,
  pattern text NOT NULL CHECK (length(pattern) BETWEEN 1 AND 300),
  category text NOT NULL CHECK (category IN ('profil', 'contacts', 'sante', 'localisation', 'vision', 'biometrie')),
  seen_on date[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (senior_id, pattern)
);

-- One consolidation per senior and Europe/Paris day: a re-run the same day changes nothing.
CREATE TABLE consolidation_runs (
  senior_id uuid NOT NULL REFERENCES seniors (id) ON DELETE CASCADE,
  day date NOT NULL,
  report jsonb NOT NULL,
  ran_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (senior_id, day)
);
