import { createMistral } from '@ai-sdk/mistral';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { assertMistralBaseUrl, type KohamiEnv } from '../mistral/base-url.ts';
import type { MemoryEmbedderPort } from '../../machines/memory/memory.port.ts';
import { LocalHashEmbedder } from '../embedders/local-hash-embedder.ts';
import { MistralEmbedClient } from '../embedders/mistral-embed-client.ts';
import { MistralAgentModel } from './mistral-agent-model.ts';
import { OfflineLanguageModel } from './offline-language-model.ts';

export interface Models {
  agent: LanguageModelV4;
  /** Mood, summaries, extraction: Mistral Small by policy. */
  subagent: LanguageModelV4;
  embedder: MemoryEmbedderPort;
  /** 'mistral' when a key is configured; 'offline' otherwise (said at start). */
  mode: 'mistral' | 'offline';
}

export interface ModelSettings {
  apiKey?: string | undefined;
  baseUrl: string;
  agentModelId: string;
  subagentModelId: string;
  env: KohamiEnv;
}

/** Chooses real Mistral models or the offline ones; the base URL is checked here (INV-T02). */
export function createModels(settings: ModelSettings): Models {
  if (!settings.apiKey) {
    const offline = new OfflineLanguageModel();
    return { agent: offline, subagent: offline, embedder: new LocalHashEmbedder(), mode: 'offline' };
  }
  assertMistralBaseUrl(settings.baseUrl, settings.env);
  const mistral = createMistral({ apiKey: settings.apiKey, baseURL: settings.baseUrl });
  return {
    // The agent streams on every turn: its streaming calls skip the AI SDK's per-call chain (mistral-agent-model.ts).
    agent: new MistralAgentModel(mistral(settings.agentModelId), { apiKey: settings.apiKey, baseUrl: settings.baseUrl, env: settings.env }),
    subagent: mistral(settings.subagentModelId),
    embedder: new MistralEmbedClient({ apiKey: settings.apiKey, baseUrl: settings.baseUrl, env: settings.env }),
    mode: 'mistral',
  };
}
