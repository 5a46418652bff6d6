-- Up Migration

-- INV-C01: one row per senior and category; revoking keeps the row (and the facts).
CREATE TABLE consents (
  senior_id uuid NOT NULL REFERENCES seniors (id) ON DELETE CASCADE,
  category text NOT NULL CHECK (category IN ('profil', 'contacts', 'sante', 'localisation', 'vision', 'biometrie', 'conversation')),
  granted_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  PRIMARY KEY (senior_id, category)
);

-- Durable facts about a senior: derived, never verbatim. The model id that embedded
-- each vector is kept so that a search never compares vectors of two models.
CREATE TABLE memory_facts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  senior_id uuid NOT NULL REFERENCES seniors (id) ON DELETE CASCADE,
  fact text NOT NULL CHECK (length(fact) BETWEEN 1 AND 1000),
  category text NOT NULL CHECK (category IN ('profil', 'contacts', 'sante', 'localisation', 'vision', 'biometrie')),
  embedding vector(1024) NOT NULL,
  embedding_model text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  -- Insertion order: breaks created_at ties (one transaction, or a coarse clock) in the chronological fallback.
  seq bigint GENERATED ALWAYS AS IDENTITY
);
-- A senior's partition: the exact per-senior ranking and the chronological fallback.
CREATE INDEX memory_facts_senior_idx ON memory_facts (senior_id, embedding_model, created_at DESC, seq DESC);
CREATE INDEX memory_facts_embedding_hnsw ON memory_facts USING hnsw (embedding vector_cosine_ops);
