-- Up Migration

-- Tier 2 of the conversation memory: each closed session archived as one summarized segment
-- (a summary written by Mistral Small under the non-verbatim guard — never the transcript).
-- embedding / embedding_model are filled for tier 3 (segments past the 3 most recent).
CREATE TABLE segments (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  senior_id uuid NOT NULL REFERENCES seniors (id) ON DELETE CASCADE,
  summary text CHECK (length(summary) <= 2000),
  started_at timestamptz NOT NULL,
  ended_at timestamptz NOT NULL,
  turn_count integer NOT NULL CHECK (turn_count >= 0),
  embedding vector(1024),
  embedding_model text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX segments_recent_idx ON segments (senior_id, ended_at DESC);
