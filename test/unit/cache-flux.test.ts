import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CacheFluxAdapter, loadCacheVariations, MAX_TRANSCRIPT_LEN_FOR_CACHE, resolveIntent } from '../../adapters/fluxes/cache-flux.adapter.ts';

const marie = { preferredName: 'Marie', isFreshSenior: false };
const variations = loadCacheVariations();

describe('CacheFluxAdapter', () => {
  it('resolves the greeting intent for bonjour, salut, coucou and bonsoir, case-insensitively', () => {
    for (const word of ['Bonjour', 'salut !', 'COUCOU', 'bonsoir Kohami']) expect(resolveIntent(word)).toBe('greeting');
    expect(resolveIntent('bonjournée')).toBeNull();
  });

  it('never matches a transcript over 30 characters, even one that starts with a greeting', () => {
    const long = 'Bonjour, je voulais vous parler de ma fille';
    expect(long.length).toBeGreaterThan(MAX_TRANSCRIPT_LEN_FOR_CACHE);
    expect(new CacheFluxAdapter(variations).resolve(long, marie)).toBeNull();
  });

  it('returns null (a miss) when no pattern matches', () => {
    expect(new CacheFluxAdapter(variations).resolve('quelle heure est-il', marie)).toBeNull();
  });

  it('rotates variations with a per-intent cursor, never the same line twice in a row', () => {
    const cache = new CacheFluxAdapter(variations);
    const heard = Array.from({ length: variations.greeting.length * 2 }, () => cache.resolve('bonjour', marie));
    for (let i = 1; i < heard.length; i++) expect(heard[i]).not.toBe(heard[i - 1]);
    expect(new Set(heard).size).toBe(variations.greeting.length);
  });

  it('keeps cursors per session: a new session starts from the first variation', () => {
    const a = new CacheFluxAdapter(variations);
    a.resolve('bonjour', marie);
    expect(new CacheFluxAdapter(variations).resolve('bonjour', marie)).toBe('Bonjour Marie, ravi de vous revoir.');
  });

  it('personalises the opening with the preferred name, and greets plainly without one', () => {
    expect(new CacheFluxAdapter(variations).resolve('bonjour', marie)).toBe('Bonjour Marie, ravi de vous revoir.');
    expect(new CacheFluxAdapter(variations).resolve('bonjour', { preferredName: null, isFreshSenior: false })).toBe('Bonjour, ravi de vous revoir.');
  });

  it('skips the greeting for a fresh senior so the agent composes a real first welcome', () => {
    expect(new CacheFluxAdapter(variations).resolve('bonjour', { preferredName: 'Marie', isFreshSenior: true })).toBeNull();
  });

  it('never serves the SOS line for a normal turn; it is only reachable through sosFallback()', () => {
    const cache = new CacheFluxAdapter(variations);
    const sos = cache.sosFallback();
    expect(sos).toBe('Bien sûr, je vous écoute.');
    for (const t of ['bonjour', 'salut', 'je vous écoute', 'bien sûr', 'aide', 'sos']) expect(cache.resolve(t, marie)).not.toBe(sos);
  });

  it('loads its variations from a seed file at boot and rejects a malformed one', () => {
    const file = path.join(tmpdir(), `variations-${process.pid}.json`);
    writeFileSync(file, JSON.stringify({ greeting: [{ opening: 'Salut', rest: 'content de vous voir.' }], sos_fallback: 'Je vous écoute.', sos_after_partial: 'Pardon. Je vous écoute.' }));
    expect(new CacheFluxAdapter(loadCacheVariations(file)).resolve('coucou', marie)).toBe('Salut Marie, content de vous voir.');
    writeFileSync(file, JSON.stringify({ greeting: [] }));
    expect(() => loadCacheVariations(file)).toThrow();
  });
});
