-- Up Migration

-- The narrative memory: who the companion is. One deployment-wide persona (senior_id NULL) and
-- optional per-senior ones; the senior's wins.
CREATE TABLE personas (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  senior_id uuid UNIQUE REFERENCES seniors (id) ON DELETE CASCADE,
  persona text NOT NULL CHECK (length(persona) BETWEEN 1 AND 4000),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX personas_deployment_idx ON personas ((senior_id IS NULL)) WHERE senior_id IS NULL;

-- The interlocutor memory (what the companion knows of the senior) and the compass (the
-- next session's preparation), written by the nightly consolidation, correctable by an admin.
CREATE TABLE profiles (
  senior_id uuid PRIMARY KEY REFERENCES seniors (id) ON DELETE CASCADE,
  interlocutor jsonb NOT NULL DEFAULT '{}',
  compass jsonb NOT NULL DEFAULT '{}',
  updated_at timestamptz NOT NULL DEFAULT now()
);
