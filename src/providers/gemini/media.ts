// OpenAI user content parts → Gemini parts (provider-reference.md §4.3): data URLs become
// `inlineData`, http(s) URLs become `fileData`, which needs a MIME type we can only take from the
// URL's extension (the gateway never downloads anything).
import { TranslationError, type ContentPart } from '../types.js';
import { isHttpUrl, parseDataUrl } from '../shared/data-url.js';
import { asRecord, asString } from '../shared/lenient-json.js';
import type { GeminiPart } from './wire-types.js';

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif',
  heic: 'image/heic', heif: 'image/heif', pdf: 'application/pdf',
};

const AUDIO_MIME: Record<string, string> = { wav: 'audio/wav', mp3: 'audio/mp3' };

/** One user content part; `param` names it, e.g. `messages[1].content[2]`. */
export function toGeminiContentPart(part: ContentPart, param: string): GeminiPart | undefined {
  const record = asRecord(part);
  switch (part.type) {
    case 'text': {
      const text = asString(record.text);
      if (text === undefined) throw new TranslationError(`${param}.text must be a string.`, `${param}.text`);
      return text === '' ? undefined : { text }; // Gemini rejects empty text parts
    }
    case 'image_url':
      return imagePart(asString(asRecord(record.image_url).url), `${param}.image_url.url`);
    case 'input_audio': {
      const audio = asRecord(record.input_audio);
      const mimeType = AUDIO_MIME[asString(audio.format) ?? ''];
      const data = asString(audio.data);
      if (mimeType === undefined || data === undefined) {
        throw new TranslationError(`${param}.input_audio needs base64 \`data\` and a \`format\` of wav or mp3.`, `${param}.input_audio`);
      }
      return { inlineData: { mimeType, data } };
    }
    case 'file':
      return filePart(asRecord(record.file), `${param}.file`);
    default:
      throw new TranslationError(`${param}.type "${part.type}" is not supported for Gemini models.`, `${param}.type`);
  }
}

function imagePart(url: string | undefined, param: string): GeminiPart {
  if (url === undefined) throw new TranslationError(`${param} must be a string.`, param);
  if (url.startsWith('data:')) {
    const parsed = parseDataUrl(url);
    if (parsed === undefined) {
      throw new TranslationError(`${param} is not a base64 data URL; Gemini needs data:<mime type>;base64,<data>.`, param);
    }
    return { inlineData: { mimeType: parsed.mimeType, data: parsed.data } };
  }
  if (!isHttpUrl(url)) {
    throw new TranslationError(`${param} must be an http(s) URL or a base64 data URL for Gemini models.`, param);
  }
  const mimeType = mimeFromUrl(url);
  if (mimeType === undefined) {
    throw new TranslationError(
      `${param}: cannot tell the image type of ${url} from its file extension, and Gemini needs one for URLs ` +
        `(known: ${Object.keys(MIME_BY_EXTENSION).join(', ')}). Send the image as a data URL (data:image/png;base64,…) instead.`,
      param,
    );
  }
  return { fileData: { mimeType, fileUri: url } };
}

function filePart(file: Record<string, unknown>, param: string): GeminiPart {
  const fileData = asString(file.file_data);
  if (fileData === undefined) {
    throw new TranslationError(`${param} needs \`file_data\` for Gemini models (OpenAI file ids cannot be sent to Gemini).`, `${param}.file_data`);
  }
  if (fileData.startsWith('data:')) {
    const parsed = parseDataUrl(fileData);
    if (parsed !== undefined) return { inlineData: { mimeType: parsed.mimeType, data: parsed.data } };
    throw new TranslationError(`${param}.file_data is not a base64 data URL.`, `${param}.file_data`);
  }
  const mimeType = mimeFromFileName(asString(file.filename) ?? '');
  if (mimeType === undefined) {
    throw new TranslationError(`${param} needs a data URL in \`file_data\` or a \`filename\` with a known extension for Gemini models.`, `${param}.filename`);
  }
  return { inlineData: { mimeType, data: fileData } };
}

function mimeFromUrl(url: string): string | undefined {
  let pathname: string;
  try {
    pathname = new URL(url).pathname; // the query string and fragment say nothing about the type
  } catch {
    return undefined;
  }
  return mimeFromFileName(pathname.slice(pathname.lastIndexOf('/') + 1));
}

function mimeFromFileName(name: string): string | undefined {
  const dot = name.lastIndexOf('.');
  return dot === -1 ? undefined : MIME_BY_EXTENSION[name.slice(dot + 1).toLowerCase()];
}
