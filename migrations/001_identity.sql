-- Up Migration
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE seniors (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  display_name text NOT NULL,
  preferred_name text,
  -- false until onboarding is done: CacheFlux then skips « ravi de vous revoir ».
  onboarding_done boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A kiosk authenticates with a bearer token; only its sha256 is stored.
CREATE TABLE devices (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  senior_id uuid NOT NULL REFERENCES seniors (id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  label text NOT NULL DEFAULT 'kiosk',
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX devices_senior_id_idx ON devices (senior_id);

CREATE TABLE api_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash text NOT NULL UNIQUE,
  role text NOT NULL CHECK (role IN ('admin', 'operator', 'caregiver')),
  label text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
