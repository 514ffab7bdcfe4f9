// Parses the `data:` URLs OpenAI clients use for inline images and files
// (`data:<mime>;base64,<data>`, see provider-reference.md §1.3 and §4.3).

export interface DataUrl {
  /** Lower-cased MIME type, e.g. `image/png`. */
  mimeType: string;
  /** The base64 payload, unchanged. */
  data: string;
}

/**
 * Returns the MIME type and base64 data of a `data:` URL, or `undefined` when the string is not a
 * base64 data URL (plain-text data URLs carry no base64 payload a provider could take as-is).
 */
export function parseDataUrl(url: string): DataUrl | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  if (comma === -1) return undefined;
  const params = url.slice(5, comma).split(';').map((p) => p.trim());
  if (params[params.length - 1]?.toLowerCase() !== 'base64') return undefined;
  const mimeType = (params[0] ?? '').toLowerCase();
  if (mimeType === '' || !mimeType.includes('/')) return undefined;
  return { mimeType, data: url.slice(comma + 1) };
}

export function isHttpUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}
