-- Up Migration

-- The caregivers' mood alert episodes (machines/memory/mood-alerts.ts), numbers only: never a
-- summary or a name. One row per episode, keyed by the day it started: however many processes
-- evaluate a senior at once, an episode is recorded once. `delivery` is its webhook's outbox:
-- `pending` from the recording until its pg-boss job (whose id is the episode's, so queueing it
-- twice is harmless) is queued, `none` when it was recorded while no webhook was set. Erased with
-- the senior (its `senior_id`) and listed in the senior's export.
CREATE TABLE caregiver_alerts (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  senior_id uuid NOT NULL REFERENCES seniors (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('tier_streak', 'weekly_drop')),
  from_day date NOT NULL,
  to_day date NOT NULL CHECK (to_day >= from_day),
  open boolean NOT NULL,
  days integer NOT NULL CHECK (days > 0),
  -- A weekly drop's averages (0–100) and their difference, as of its last day; null for a streak.
  previous_average real,
  average real,
  drop real,
  delivery text NOT NULL CHECK (delivery IN ('none', 'pending', 'queued')),
  detected_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (senior_id, kind, from_day)
);
-- An evaluation reads the senior's episodes that reach into its window.
CREATE INDEX caregiver_alerts_senior_to_idx ON caregiver_alerts (senior_id, to_day);
