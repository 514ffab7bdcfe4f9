// OpenAI message content (strings and content parts) → Anthropic content blocks
// (provider-reference.md §2.4 and §4.3). Empty text is left out: Anthropic rejects empty text blocks.
import type { ContentPart } from '../types.js';
import { TranslationError } from '../types.js';
import { isHttpUrl, parseDataUrl } from '../shared/data-url.js';
import { asRecord, asString } from '../shared/lenient-json.js';

export type AnthropicBlock = Record<string, unknown>;

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const PDF = 'application/pdf';

function textBlock(text: string): AnthropicBlock[] {
  return text === '' ? [] : [{ type: 'text', text }];
}

/** Content of system, developer, assistant and tool messages: a string or `text` parts only. */
export function toAnthropicTextBlocks(content: unknown, param: string): AnthropicBlock[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return textBlock(content);
  if (!Array.isArray(content)) throw new TranslationError(`${param} must be a string or an array of text parts.`, param);
  return content.flatMap((part: unknown, j) => {
    const p = asRecord(part);
    if (p.type === 'text') return textBlock(asString(p.text) ?? '');
    if (p.type === 'refusal') return textBlock(asString(p.refusal) ?? ''); // assistant history only
    throw new TranslationError(`${param}[${j}] has type ${JSON.stringify(p.type)}; only text parts are allowed here.`, `${param}[${j}].type`);
  });
}

/** Content of a user message: text, images (data or http(s) URLs) and PDF files. */
export function toAnthropicUserBlocks(content: string | ContentPart[], param: string): AnthropicBlock[] {
  if (typeof content === 'string') return textBlock(content);
  if (!Array.isArray(content)) throw new TranslationError(`${param} must be a string or an array of content parts.`, param);
  return content.flatMap((part, j) => toAnthropicPart(asRecord(part), `${param}[${j}]`));
}

function toAnthropicPart(part: Record<string, unknown>, param: string): AnthropicBlock[] {
  switch (part.type) {
    case 'text':
      return textBlock(asString(part.text) ?? '');
    case 'image_url':
      // `detail` has no Anthropic equivalent and is dropped (§4.3).
      return [fromImageUrl(asString(asRecord(part.image_url).url) ?? '', `${param}.image_url.url`)];
    case 'file':
      return [fromFile(asRecord(part.file), `${param}.file`)];
    case 'input_audio':
      throw new TranslationError('Audio input is not supported for Anthropic models.', `${param}.type`);
    default:
      throw new TranslationError(`Content part type ${JSON.stringify(part.type)} is not supported for Anthropic models.`, `${param}.type`);
  }
}

function fromImageUrl(url: string, param: string): AnthropicBlock {
  const data = parseDataUrl(url);
  if (data !== undefined) return fromBase64(data.mimeType, data.data, param);
  if (isHttpUrl(url)) {
    // Anthropic fetches URL sources itself; a URL naming a .pdf becomes a document block.
    const isPdf = /\.pdf$/i.test(url.split(/[?#]/)[0] ?? '');
    return { type: isPdf ? 'document' : 'image', source: { type: 'url', url } };
  }
  throw new TranslationError(`${param} must be an http(s) URL or a base64 data URL.`, param);
}

function fromBase64(mimeType: string, data: string, param: string): AnthropicBlock {
  const media = mimeType === 'image/jpg' ? 'image/jpeg' : mimeType;
  if (IMAGE_TYPES.has(media)) return { type: 'image', source: { type: 'base64', media_type: media, data } };
  if (media === PDF) return { type: 'document', source: { type: 'base64', media_type: PDF, data } };
  throw new TranslationError(
    `${param} has MIME type ${mimeType}, which Anthropic does not accept; use image/jpeg, image/png, image/gif, image/webp or application/pdf.`,
    param,
  );
}

/** OpenAI `file` parts: inline data only (OpenAI file ids mean nothing to Anthropic). */
function fromFile(file: Record<string, unknown>, param: string): AnthropicBlock {
  const fileData = asString(file.file_data);
  if (fileData === undefined) {
    throw new TranslationError('Only inline file_data is supported for Anthropic models; OpenAI file ids cannot be used.', `${param}.file_id`);
  }
  const data = parseDataUrl(fileData);
  if (data !== undefined) return fromBase64(data.mimeType, data.data, `${param}.file_data`);
  // Bare base64: the filename is the only hint of the type.
  if (/\.pdf$/i.test(asString(file.filename) ?? '')) return fromBase64(PDF, fileData, `${param}.file_data`);
  throw new TranslationError(`${param}.file_data must be a base64 data URL (e.g. data:application/pdf;base64,…).`, `${param}.file_data`);
}
