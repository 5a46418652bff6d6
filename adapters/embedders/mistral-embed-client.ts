import { createMistral } from '@ai-sdk/mistral';
import { assertMistralBaseUrl, type KohamiEnv } from '../../runtime/config.ts';
import { AiSdkEmbedder } from './ai-sdk-embedder.ts';

export const MISTRAL_EMBED_MODEL = 'mistral-embed';

/** `mistral-embed` (1024-d) through the AI SDK; the base URL is checked here, at construction (INV-T02). */
export class MistralEmbedClient extends AiSdkEmbedder {
  constructor(settings: { apiKey: string; baseUrl: string; env: KohamiEnv }) {
    assertMistralBaseUrl(settings.baseUrl, settings.env);
    const mistral = createMistral({ apiKey: settings.apiKey, baseURL: settings.baseUrl });
    super(mistral.embedding(MISTRAL_EMBED_MODEL), MISTRAL_EMBED_MODEL);
  }
}
