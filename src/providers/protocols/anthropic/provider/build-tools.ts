// IR tools, tool choice and parallel_tool_calls → Anthropic `tools` and `tool_choice`
// (provider-reference.md §2.5, §4.2).
import type { Request } from '../../../ir/types.js';
import { TranslationError } from '../../../types.js';
import { cached, type Block } from './build-content.js';

export function toAnthropicTools(req: Request): { tools?: Block[]; tool_choice?: Block } {
  const choice = req.toolChoice;
  if (req.tools.length === 0) {
    if (choice === undefined || choice.type === 'none' || choice.type === 'auto') return {};
    throw new TranslationError('tool_choice requires a non-empty tools list.', 'tool_choice');
  }
  const tools = req.tools.map((t) => {
    const tool: Block = { name: t.name };
    if (t.description !== undefined) tool.description = t.description;
    tool.input_schema = t.inputSchema;
    if (t.strict === true) tool.strict = true;
    return cached(tool, t.cache);
  });
  const toolChoice: Block | undefined = choice === undefined ? undefined
    : choice.type === 'required' ? { type: 'any' }
    : choice.type === 'tool' ? { type: 'tool', name: choice.name }
    : { type: choice.type };
  if (req.parallelToolCalls === false && choice?.type !== 'none') {
    const base = toolChoice ?? { type: 'auto' };
    base.disable_parallel_tool_use = true;
    return { tools, tool_choice: base };
  }
  return toolChoice === undefined ? { tools } : { tools, tool_choice: toolChoice };
}
