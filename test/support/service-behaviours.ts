/**
 * The ways Mistral's service is documented or reported to behave that the fakes can play, one name each.
 * The conforming fake plays none of them; a test or a bench switches one on (`fake.behaviours.add(name)`,
 * on the FakeVoxtral for the audio ones, on the FakeMistral for chat and embeddings, on both for
 * `rate-limited`). Where each was reported: ../shared/research/mistral-service.md and docs/voice.md.
 */
export const SERVICE_BEHAVIOURS = {
  // --- realtime transcription ---
  'cumulative-final': "a flush's final text is everything said since the socket opened, not the last utterance (pipecat#4485)",
  'held-last-words': "the last 1–2 words of an utterance never come as live text, only in the flush's answer (client-python#357)",
  fragments: 'live text comes as word fragments with their spaces built in, not whole words (LiveKit plugin)',
  'flush-unanswered': 'no flush is ever answered',
  'flush-unanswered-after-first': "a socket's first flush is answered, its later ones are not (pipecat#4487)",
  'late-flush': 'every flush is answered 1.5 s late',
  'idle-error': 'a socket that receives no audio for 30 s gets an error event (code 3804) and is closed',
  'no-session-updated': 'session.update is applied but never acknowledged with session.updated',
  'accepts-undocumented-fields': "session.update's `language` and `context_bias` are accepted (the conforming fake refuses any field the SDK's schema lacks)",
  // --- speech ---
  'speech-raw-opus': '`response_format: "opus"` streams raw Opus packets, one per delta, in no container',
  'speech-opus-refused': '`response_format: "opus"` is refused with a 422',
  'speech-slow-first-packet': "an `opus` answer's first delta comes 2 s after the request (PCM's at once: the docs give PCM ~0.7–0.8 s to first audio)",
  'unknown-voice': 'the configured voice is not among the voices listed: speech with it answers 404',
  // --- every endpoint ---
  'rate-limited': 'the first call to each endpoint after it is switched on (chat, embeddings, speech, voices, the socket upgrade) answers 429 with `Retry-After: 1`; later calls are served',
} as const;

export type ServiceBehaviour = keyof typeof SERVICE_BEHAVIOURS;
export const SERVICE_BEHAVIOUR_NAMES = Object.keys(SERVICE_BEHAVIOURS) as ServiceBehaviour[];
