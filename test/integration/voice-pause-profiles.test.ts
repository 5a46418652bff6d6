import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadCacheVariations } from '../../adapters/fluxes/cache-flux.adapter.ts';
import { PgProfilesRepository } from '../../adapters/postgres/pg-profiles.repository.ts';
import { generateToken } from '../../adapters/postgres/tokens.ts';
import { EMPTY_PAUSE_PROFILE } from '../../machines/voice/pause-profile.ts';
import { loadConfig } from '../../runtime/config.ts';
import type { ServerFrame } from '../../runtime/protocol/server-frames.ts';
import { PauseProfiles } from '../../runtime/voice/pause-profiles.ts';
import { createVoiceServices } from '../../runtime/voice/voice-services.ts';
import { voiceSessionFactory } from '../../runtime/voice/voice-session.ts';
import { FakeMistral } from '../support/fake-mistral.ts';
import { FakeVoxtral } from '../support/fake-voxtral.ts';
import { KioskClient } from '../support/kiosk-client.ts';
import { adminApi, startTestRuntime, type TestRuntime } from '../support/runtime.ts';
import { chunks, concat, frenchSpeech, silence } from '../support/speech.ts';

/**
 * A senior's mid-sentence pause profile on real PGlite: written back when a voice session closes,
 * only under the `conversation` consent, given to the next session only under it, readable by an
 * admin as numbers, and erased with the senior.
 */

let voxtral: FakeVoxtral;
let mistral: FakeMistral;
let rt: TestRuntime;
let api: ReturnType<typeof adminApi>;
let repo: PgProfilesRepository;

beforeAll(async () => {
  voxtral = new FakeVoxtral();
  mistral = await new FakeMistral(voxtral).start();
  rt = await startTestRuntime({}, { MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl });
  api = adminApi(rt);
  repo = new PgProfilesRepository(rt.db.pool);
}, 60_000);

afterAll(async () => {
  await rt?.close();
  await mistral?.stop();
  await voxtral?.stop();
});

async function senior(name: string, consents: string[]): Promise<{ id: string; token: string }> {
  const id = await rt.directory.createSenior({ displayName: name, preferredName: name, onboardingDone: true });
  const token = generateToken('kiosk');
  await rt.directory.addDevice(id, token);
  for (const category of consents) expect((await api('PUT', `/v1/admin/seniors/${id}/consents/${category}`)).status).toBeLessThan(300);
  return { id, token };
}

const storedCount = async (id: string) => (await rt.db.pool.query<{ pauses: { count: number } | null }>('SELECT pauses FROM profiles WHERE senior_id = $1', [id])).rows[0]?.pauses?.count ?? null;

/** A kiosk session for the senior: the actor's profile as it was loaded at its start. */
async function liveSession(token: string) {
  const kiosk = await KioskClient.connect(rt.wsUrl, token);
  await kiosk.start();
  return kiosk;
}

describe('the pause profile’s storage', () => {
  it('is written back under the conversation consent, one transaction per session, and read by an admin as numbers', async () => {
    const { id } = await senior('Lucienne', ['conversation']);
    const pauses = new PauseProfiles(repo, rt.consents, rt.logger);
    pauses.save(id, new Array(10).fill(900));
    pauses.save(id, new Array(10).fill(1100));
    await pauses.settled();
    // Both sessions counted (the second read the first's row under its lock).
    expect(await storedCount(id)).toBe(20);
    const profile = await api('GET', `/v1/admin/seniors/${id}/profile`);
    expect(profile.status).toBe(200);
    expect(profile.body.pauses).toEqual({ count: 20, p50Ms: expect.any(Number), p90Ms: expect.any(Number) });
    expect(profile.body.pauses.p90Ms).toBeGreaterThanOrEqual(1100);
    expect(profile.body.pauses.p90Ms).toBeLessThanOrEqual(1200);
    // An admin's correction of the interlocutor profile leaves the pauses as they were.
    await api('PUT', `/v1/admin/seniors/${id}/profile`, { interlocutor: { role: 'couturière' } });
    expect(await storedCount(id)).toBe(20);
  });

  it('without the conversation consent: nothing written, and nothing given to a session', async () => {
    const { id, token } = await senior('Raymond', ['profil']);
    const pauses = new PauseProfiles(repo, rt.consents, rt.logger);
    pauses.save(id, [900, 1000, 1100]);
    await pauses.settled();
    expect(await storedCount(id)).toBeNull();
    // Stored earlier (while consented), the profile is still not given to a session started without the consent.
    await repo.updatePauses(id, () => ({ ...EMPTY_PAUSE_PROFILE, count: 3 }));
    const kiosk = await liveSession(token);
    try {
      const live = rt.registry.list().find((s) => s.seniorId === id)!;
      expect(live.actor.getSnapshot().context.profile.pauses).toBeUndefined();
    } finally {
      kiosk.close();
    }
    // Granted: the next session gets it with its profile.
    await api('PUT', `/v1/admin/seniors/${id}/consents/conversation`);
    await vi.waitFor(() => expect(rt.registry.list().some((s) => s.seniorId === id && s.link !== null)).toBe(false));
    const again = await liveSession(token);
    try {
      const live = rt.registry.list().find((s) => s.seniorId === id)!;
      expect(live.actor.getSnapshot().context.profile.pauses).toMatchObject({ version: 1, count: 3 });
    } finally {
      again.close();
    }
  });

  it('a consent revoked during the session stops the write at close', async () => {
    const { id } = await senior('Germaine', ['conversation']);
    const pauses = new PauseProfiles(repo, rt.consents, rt.logger);
    pauses.save(id, [800]);
    await pauses.settled();
    expect(await storedCount(id)).toBe(1);
    await api('DELETE', `/v1/admin/seniors/${id}/consents/conversation`);
    pauses.save(id, [800, 900]);
    await pauses.settled();
    expect(await storedCount(id)).toBe(1);
  });

  it('goes with the senior’s erasure, and a session closing after it writes nothing back', async () => {
    const { id } = await senior('Marcel', ['conversation']);
    const pauses = new PauseProfiles(repo, rt.consents, rt.logger);
    pauses.save(id, [700, 800]);
    await pauses.settled();
    expect(await storedCount(id)).toBe(2);
    const erased = await api('DELETE', `/v1/admin/seniors/${id}/data`);
    expect(erased).toMatchObject({ status: 200, body: { erased: { profiles: 1, seniors: 1 } } });
    pauses.save(id, [700, 800]);
    await pauses.settled();
    expect((await rt.db.pool.query('SELECT 1 FROM profiles WHERE senior_id = $1', [id])).rowCount).toBe(0);
    // Even without the consent check, the row is never re-created for an erased senior.
    expect(await repo.updatePauses(id, (p) => p)).toBe(false);
    expect((await rt.db.pool.query('SELECT 1 FROM profiles WHERE senior_id = $1', [id])).rowCount).toBe(0);
  });
});

describe('a voice session’s pauses', () => {
  it('a pause that speech resumed after is counted, and written back when the session closes', async () => {
    const { id, token } = await senior('Yvette', ['conversation']);
    const kiosk = await liveSession(token);
    try {
      const live = rt.registry.list().find((s) => s.seniorId === id)!;
      expect(live.actor.getSnapshot().context.profile.pauses).toEqual(EMPTY_PAUSE_PROFILE);
      const config = loadConfig({ KOHAMI_ENV: 'test', MISTRAL_API_KEY: 'test-key', MISTRAL_BASE_URL: mistral.baseUrl });
      const services = await createVoiceServices(config, { pool: rt.db.pool, consents: rt.consents, variations: loadCacheVariations(), metrics: rt.metrics, logger: rt.logger });
      const frames: ServerFrame[] = [];
      const link = { send: (frame: ServerFrame) => void frames.push(frame), sendAudio: () => undefined, unreadBytes: 0 };
      const voice = voiceSessionFactory(services).create({ session: live, link, output: { encoding: 'pcm_s16le', sampleRate: 16_000 }, aec: true, nextTurnId: () => 'y1' });
      voxtral.utterances.push({ text: 'Je suis allée chez ma fille' });
      // A 400 ms pause inside the sentence: shorter than any wait, so speech resumes in the same utterance.
      const audio = concat([silence(200), await frenchSpeech('Je suis allée chez'), silence(400), await frenchSpeech('ma fille.'), silence(3500)]);
      for (const chunk of chunks(audio, 20)) voice.pushAudio(chunk);
      await vi.waitFor(() => expect(frames.filter((f) => f.type === 'transcript.final')).toHaveLength(1), { timeout: 10_000 });
      voice.close();
      await services.pausesSettled!();
      expect(await storedCount(id)).toBeGreaterThanOrEqual(1);
      const stored = (await repo.profile(id)).pauses;
      // Numbers only: the bins and the count.
      expect(JSON.stringify(stored)).not.toMatch(/fille|chez/);
    } finally {
      kiosk.close();
    }
  }, 30_000);
});
