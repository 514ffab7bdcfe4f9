// OpenAI `tools` and `tool_choice` → Gemini `tools[].functionDeclarations` and
// `toolConfig.functionCallingConfig` (provider-reference.md §4.2).
import { TranslationError, type FunctionTool, type ToolChoice } from '../types.js';
import { asRecord, asString } from '../shared/lenient-json.js';
import { toGeminiParameters } from './schema.js';
import type { GeminiFunctionDeclaration, GeminiRequestBody, GeminiToolConfig } from './wire-types.js';

/** Gemini: "Must start with a letter or an underscore… a-z, A-Z, 0-9, underscores, dots, colons and dashes, max 128". */
const GEMINI_FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;

export function toGeminiTools(tools: FunctionTool[] | undefined): GeminiRequestBody['tools'] {
  if (tools === undefined || tools === null || tools.length === 0) return undefined;
  const declarations = tools.map((tool, i): GeminiFunctionDeclaration => {
    const param = `tools[${i}]`;
    if (tool.type !== 'function') {
      throw new TranslationError(`${param}.type "${String(tool.type)}" is not supported for Gemini models; only function tools are.`, `${param}.type`);
    }
    const fn = asRecord(tool.function);
    const name = asString(fn.name) ?? '';
    if (!GEMINI_FUNCTION_NAME.test(name)) {
      throw new TranslationError(
        `${param}.function.name "${name}" is not a valid Gemini function name (it must start with a letter or an underscore).`,
        `${param}.function.name`,
      );
    }
    const declaration: GeminiFunctionDeclaration = { name };
    const description = asString(fn.description);
    if (description !== undefined && description !== '') declaration.description = description;
    // `strict` has no Gemini counterpart and is dropped.
    const parameters = toGeminiParameters(fn.parameters, `${param}.function.parameters`);
    if (parameters !== undefined) declaration.parameters = parameters;
    return declaration;
  });
  return [{ functionDeclarations: declarations }];
}

export function toGeminiToolConfig(choice: ToolChoice | undefined | null, hasTools: boolean): GeminiToolConfig | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (!hasTools) {
    // Without tools, "auto" and "none" mean the same thing as sending nothing.
    if (choice === 'auto' || choice === 'none') return undefined;
    throw new TranslationError('tool_choice asks for a tool call but the request has no tools.', 'tool_choice');
  }
  if (choice === 'auto') return { functionCallingConfig: { mode: 'AUTO' } };
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  const name = typeof choice === 'object' && choice.type === 'function' ? asString(asRecord(choice.function).name) : undefined;
  if (name === undefined) {
    throw new TranslationError('tool_choice must be "auto", "none", "required" or {type:"function", function:{name}} for Gemini models.', 'tool_choice');
  }
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [name] } };
}
