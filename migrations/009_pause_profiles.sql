-- Up Migration

-- Voice mode: each senior's mid-sentence pauses, numbers only (a decayed histogram of pause lengths
-- and a count, see machines/voice/pause-profile.ts), kept with the interlocutor profile. Derived only
-- under the `conversation` consent; the profiles row, and so this, goes with the senior's erasure.
ALTER TABLE profiles ADD COLUMN pauses jsonb;
