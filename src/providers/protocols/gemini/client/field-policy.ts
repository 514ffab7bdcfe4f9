// Which generateContent fields the Gemini door maps, ignores or refuses when the model is not
// Gemini's (a Gemini model goes through the same-protocol fast path, untouched). gemini-cli and
// the SDKs send several of these by default, so none of their defaults may become a 400
// (README, "Gemini door").

/** Top-level fields translated into the internal representation (parse-request.ts). */
export const MAPPED_FIELDS: readonly string[] = [
  'contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig',
  // `model` is read from the URL (the target); `stream` is set by the daemon for :streamGenerateContent.
  'model', 'stream',
];

/**
 * Dropped without error: they steer Gemini's own safety filters, billing, serving tier or
 * grounding, which no other provider has, and leaving them out does not change what the answer
 * means. (In `generationConfig`, `mediaResolution`, `enableEnhancedCivicAnswers`,
 * `audioTimestamp`, `routingConfig`, `modelSelectionConfig` and a text-only `responseModalities`
 * are dropped the same way; so are `toolConfig.retrievalConfig`, a function declaration's
 * `response`/`responseJsonSchema`/`behavior`, and a part's `videoMetadata`/`mediaResolution`.)
 */
export const IGNORED_FIELDS: readonly string[] = ['safetySettings', 'labels', 'serviceTier'];

/** Refused for a foreign model: the answer would silently lack what they ask for. */
export const REFUSED_FIELDS: Readonly<Record<string, string>> = {
  cachedContent: 'a context cache (cachedContent) holds part of the prompt on Gemini\'s servers; send its contents instead',
};

/** `generationConfig` fields that ask for output other than text: refused. */
export const REFUSED_GENERATION_FIELDS: Readonly<Record<string, string>> = {
  speechConfig: 'spoken (audio) output is only produced by Gemini models',
  imageConfig: 'image output is only produced by Gemini models',
};

/** A `tools[]` entry's only key the door reads; any other (googleSearch, codeExecution, urlContext…) is a tool Gemini runs itself. */
export const FUNCTION_DECLARATIONS = 'functionDeclarations';
