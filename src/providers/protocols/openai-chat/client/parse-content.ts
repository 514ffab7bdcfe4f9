// Chat content parts → IR parts (provider-reference.md §1.3, §4.3): text as is; images and files
// as base64 (from data URLs) or URL sources; `input_audio` as an inline document. Whether the
// target provider takes a media type is its builder's call (it names the field through `param`);
// what no provider behind this door can take (OpenAI file ids, unknown part types) is refused here.
// A part may carry Anthropic's `cache_control` (the convention OpenRouter and the AI SDK use): it
// becomes the part's cache hint, which the Anthropic builder sends and the others leave out.
import type { CacheHint, DocumentPart, ImagePart, TextPart, UserPart } from '../../../ir/types.js';
import { TranslationError } from '../../../types.js';
import { isHttpUrl, parseDataUrl } from '../../../shared/data-url.js';
import { asRecord, asString } from '../../../shared/lenient-json.js';
import { KNOWN_EXTENSIONS, mimeFromFileName } from '../../../shared/media-types.js';

const AUDIO_MIME: Readonly<Record<string, string>> = { wav: 'audio/wav', mp3: 'audio/mp3' };

/** A string or `text` parts (validated upstream): system, developer, assistant and tool content; `param` names it. */
export function textParts(content: unknown, param: string): TextPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const out: TextPart[] = [];
  content.forEach((part, j) => {
    const p = asRecord(part);
    const text = p.type === 'text' ? asString(p.text) : p.type === 'refusal' ? asString(p.refusal) : undefined;
    if (text !== undefined) out.push(withCache<TextPart>({ type: 'text', text }, p, `${param}[${j}]`));
  });
  return out;
}

/** A user message's content; `param` names it, e.g. `messages[1].content`. */
export function userParts(content: unknown, param: string, provider: string): UserPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  return content.map((part, j) => {
    const p = asRecord(part);
    return withCache(userPart(p, `${param}[${j}]`, provider), p, `${param}[${j}]`);
  });
}

function userPart(part: Record<string, unknown>, param: string, provider: string): UserPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: asString(part.text) ?? '' };
    case 'image_url':
      return imagePart(asRecord(part.image_url), `${param}.image_url`);
    case 'file':
      return filePart(asRecord(part.file), `${param}.file`, provider);
    case 'input_audio':
      return audioPart(asRecord(part.input_audio), param);
    default:
      throw new TranslationError(`Content part type ${JSON.stringify(part.type)} is not supported for ${provider} models.`, `${param}.type`);
  }
}

/** The part with the client's `cache_control` as its cache hint; a malformed one is refused naming it. */
function withCache<P extends { cache?: CacheHint }>(out: P, part: Record<string, unknown>, param: string): P {
  const cc = part.cache_control;
  if (cc === undefined || cc === null) return out;
  const o = asRecord(cc);
  if (o.type !== 'ephemeral' || (o.ttl !== undefined && o.ttl !== '5m' && o.ttl !== '1h')) {
    throw new TranslationError(`${param}.cache_control must be {"type": "ephemeral"} with an optional "ttl" of "5m" or "1h".`, `${param}.cache_control`);
  }
  out.cache = o.ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: o.ttl };
  return out;
}

function imagePart(image: Record<string, unknown>, param: string): ImagePart {
  const urlParam = `${param}.url`;
  const url = asString(image.url) ?? '';
  const data = parseDataUrl(url);
  const part: ImagePart = data !== undefined
    ? { type: 'image', source: { kind: 'base64', mediaType: data.mimeType, data: data.data }, param: urlParam }
    : isHttpUrl(url) ? { type: 'image', source: { kind: 'url', url }, param: urlParam }
    : badUrl(urlParam);
  const detail = image.detail;
  if (detail === 'auto' || detail === 'low' || detail === 'high') part.detail = detail;
  return part;
}

function badUrl(param: string): never {
  throw new TranslationError(`${param} must be an http(s) URL or a base64 data URL (data:<mime type>;base64,<data>).`, param);
}

/** Inline file data only: an OpenAI file id means nothing to another provider. */
function filePart(file: Record<string, unknown>, param: string, provider: string): DocumentPart {
  const fileData = asString(file.file_data);
  if (fileData === undefined) {
    const field = file.file_id === undefined ? `${param}.file_data` : `${param}.file_id`;
    throw new TranslationError(`${param} needs inline file_data for ${provider} models; OpenAI file ids cannot be used.`, field);
  }
  const dataParam = `${param}.file_data`;
  if (fileData.startsWith('data:')) {
    const data = parseDataUrl(fileData);
    if (data === undefined) throw new TranslationError(`${dataParam} must be a base64 data URL (e.g. data:application/pdf;base64,…).`, dataParam);
    return { type: 'document', source: { kind: 'base64', mediaType: data.mimeType, data: data.data }, param: dataParam };
  }
  // Bare base64: the filename is the only hint of the type.
  const mediaType = mimeFromFileName(asString(file.filename) ?? '');
  if (mediaType === undefined) {
    throw new TranslationError(
      `${dataParam} must be a base64 data URL (e.g. data:application/pdf;base64,…), or come with a filename ending in ${KNOWN_EXTENSIONS.join(', ')}.`,
      dataParam,
    );
  }
  return { type: 'document', source: { kind: 'base64', mediaType, data: fileData }, param: dataParam };
}

function audioPart(audio: Record<string, unknown>, param: string): DocumentPart {
  const format = asString(audio.format);
  const mediaType = format !== undefined && Object.hasOwn(AUDIO_MIME, format) ? AUDIO_MIME[format] : undefined;
  const data = asString(audio.data);
  if (mediaType === undefined || data === undefined) {
    throw new TranslationError(`${param}.input_audio needs base64 \`data\` and a \`format\` of wav or mp3.`, `${param}.input_audio`);
  }
  return { type: 'document', source: { kind: 'base64', mediaType, data }, param: `${param}.type` };
}
