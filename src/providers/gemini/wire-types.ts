// The Gemini `generateContent` request shapes we send (provider-reference.md §3.2). Responses are
// read leniently with the shared helpers instead, so they have no types here.
import type { GeminiSchema } from './schema.js';

export interface GeminiFunctionCall { id?: string; name: string; args: Record<string, unknown> }
export interface GeminiFunctionResponse { id?: string; name: string; response: { output: unknown } }

/** Exactly one data field per part; `thoughtSignature` rides along on a `functionCall` part. */
export type GeminiPart =
  | { text: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType: string; fileUri: string } }
  | { functionCall: GeminiFunctionCall; thoughtSignature?: string }
  | { functionResponse: GeminiFunctionResponse };

export interface GeminiContent { role: 'user' | 'model'; parts: GeminiPart[] }

export interface GeminiFunctionDeclaration { name: string; description?: string; parameters?: GeminiSchema }

export interface GeminiToolConfig {
  functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] };
}

export interface GeminiGenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  candidateCount?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  responseLogprobs?: boolean;
  logprobs?: number;
  responseMimeType?: string;
  responseJsonSchema?: unknown;
  thinkingConfig?: { thinkingLevel?: 'MINIMAL' | 'LOW' | 'MEDIUM' | 'HIGH'; thinkingBudget?: number; includeThoughts?: boolean };
}

export interface GeminiRequestBody {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
}
