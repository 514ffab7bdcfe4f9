// The Gemini `generateContent` request shapes the provider side sends (provider-reference.md §3.2).
// Answers are read leniently with the shared helpers instead, so they have no types here.
import type { GeminiSchema } from './schema.js';

export interface GeminiFunctionCall { id?: string; name: string; args: Record<string, unknown> }
export interface GeminiFunctionResponse { id?: string; name: string; response: { output: unknown } }

/** One data field per part; `thoughtSignature` rides on the part it was given with (a call, or text). */
export type GeminiPart =
  | { text: string; thoughtSignature?: string }
  | { inlineData: { mimeType: string; data: string } }
  | { fileData: { mimeType: string; fileUri: string } }
  | { functionCall: GeminiFunctionCall; thoughtSignature?: string }
  | { functionResponse: GeminiFunctionResponse };

export interface GeminiContent { role: 'user' | 'model'; parts: GeminiPart[] }

export interface GeminiFunctionDeclaration { name: string; description?: string; parameters?: GeminiSchema }

export interface GeminiToolConfig {
  functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] };
}

export type GeminiThinkingLevel = 'MINIMAL' | 'LOW' | 'MEDIUM' | 'HIGH';

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
  thinkingConfig?: { thinkingLevel?: GeminiThinkingLevel; thinkingBudget?: number; includeThoughts?: boolean };
}

export interface GeminiRequestBody {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  tools?: Array<{ functionDeclarations: GeminiFunctionDeclaration[] }>;
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
}
