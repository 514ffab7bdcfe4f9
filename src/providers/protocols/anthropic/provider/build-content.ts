// IR content parts → Anthropic content blocks (provider-reference.md §2.4, §4.3). Empty text is left
// out (Anthropic rejects empty text blocks); images and PDFs go as base64 or URL sources, plain-text
// documents as text sources; anything else is refused naming the client's field (`part.param`).
import type { CacheHint, DocumentPart, ImagePart, TextPart } from '../../../ir/types.js';
import { TranslationError } from '../../../types.js';
import { mimeFromUrl } from '../../../shared/media-types.js';

export type Block = Record<string, unknown>;

const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);
const PDF = 'application/pdf';

/** Adds `cache_control` when the client asked for a cache breakpoint here. */
export function cached(block: Block, cache: CacheHint | undefined): Block {
  if (cache !== undefined) block.cache_control = cache.ttl === undefined ? { type: cache.type } : { type: cache.type, ttl: cache.ttl };
  return block;
}

/** A text block, or nothing for empty text. */
export function textBlocks(part: TextPart): Block[] {
  return part.text === '' ? [] : [cached({ type: 'text', text: part.text }, part.cache)];
}

/** `where` names the part when the client's door gave no field for it. */
export function mediaBlock(part: ImagePart | DocumentPart, where: string, provider: string): Block {
  const param = part.param ?? where;
  const source = part.source;
  let block: Block;
  switch (source.kind) {
    case 'base64': {
      const media = source.mediaType === 'image/jpg' ? 'image/jpeg' : source.mediaType;
      if (IMAGE_TYPES.has(media)) block = { type: 'image', source: { type: 'base64', media_type: media, data: source.data } };
      else if (media === PDF) block = { type: 'document', source: { type: 'base64', media_type: PDF, data: source.data } };
      else if (media.startsWith('audio/')) throw new TranslationError(`Audio input is not supported for ${provider} models.`, param);
      else {
        throw new TranslationError(
          `${param} has MIME type ${source.mediaType}, which ${provider} does not accept; use image/jpeg, image/png, image/gif, image/webp or application/pdf.`,
          param,
        );
      }
      break;
    }
    case 'url': {
      // Anthropic fetches URL sources itself; a URL naming a PDF becomes a document block.
      const isPdf = (source.mediaType ?? mimeFromUrl(source.url)) === PDF || (part.type === 'document' && source.mediaType === undefined);
      block = { type: isPdf ? 'document' : 'image', source: { type: 'url', url: source.url } };
      break;
    }
    case 'text':
      if (part.type === 'image') throw new TranslationError(`${param} must be an image, not text.`, param);
      block = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: source.text } };
      break;
    default: {
      const never: never = source;
      return never;
    }
  }
  if (part.type === 'document' && part.title !== undefined && block.type === 'document') block.title = part.title;
  return cached(block, part.cache);
}
