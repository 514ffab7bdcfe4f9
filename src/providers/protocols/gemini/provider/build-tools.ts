// IR tools and tool choice → Gemini `tools[].functionDeclarations` and
// `toolConfig.functionCallingConfig` (provider-reference.md §3.8, §4.2). Schemas go through the
// Gemini schema converter (gemini/schema.ts). `strict` and parallel_tool_calls have no Gemini
// counterpart and are dropped: every Chat client already reads tool_calls as an array.
import type { Request } from '../../../ir/types.js';
import { TranslationError } from '../../../types.js';
import { toGeminiParameters } from '../schema.js';
import type { GeminiFunctionDeclaration, GeminiRequestBody, GeminiToolConfig } from '../wire.js';

/** Gemini: "Must start with a letter or an underscore… a-z, A-Z, 0-9, underscores, dots, colons and dashes, max 128". */
const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;

export function toGeminiTools(req: Request, provider: string): Pick<GeminiRequestBody, 'tools' | 'toolConfig'> {
  const choice = req.toolChoice;
  if (req.tools.length === 0) {
    // Without tools, "auto" and "none" mean the same thing as sending nothing.
    if (choice === undefined || choice.type === 'auto' || choice.type === 'none') return {};
    throw new TranslationError('tool_choice asks for a tool call but the request has no tools.', 'tool_choice');
  }
  const declarations = req.tools.map((tool, i): GeminiFunctionDeclaration => {
    if (!FUNCTION_NAME.test(tool.name)) {
      throw new TranslationError(`tools[${i}]: "${tool.name}" is not a valid ${provider} function name (it must start with a letter or an underscore).`, `tools[${i}]`);
    }
    const declaration: GeminiFunctionDeclaration = { name: tool.name };
    if (tool.description !== undefined && tool.description !== '') declaration.description = tool.description;
    const parameters = toGeminiParameters(tool.inputSchema, `tools[${i}].parameters`);
    if (parameters !== undefined) declaration.parameters = parameters;
    return declaration;
  });
  const out: Pick<GeminiRequestBody, 'tools' | 'toolConfig'> = { tools: [{ functionDeclarations: declarations }] };
  const config = toolConfig(req.toolChoice);
  if (config !== undefined) out.toolConfig = config;
  return out;
}

function toolConfig(choice: Request['toolChoice']): GeminiToolConfig | undefined {
  switch (choice?.type) {
    case undefined: return undefined;
    case 'auto': return { functionCallingConfig: { mode: 'AUTO' } };
    case 'none': return { functionCallingConfig: { mode: 'NONE' } };
    case 'required': return { functionCallingConfig: { mode: 'ANY' } };
    case 'tool': return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
    default: { const never: never = choice; return never; }
  }
}
