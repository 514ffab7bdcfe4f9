// MIME types told by a file name's extension, for the media a client sends without one (an http(s)
// URL, or bare base64 with only a filename). The gateway never downloads anything to find out.

const MIME_BY_EXTENSION: Readonly<Record<string, string>> = {
  png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', webp: 'image/webp', gif: 'image/gif',
  heic: 'image/heic', heif: 'image/heif', pdf: 'application/pdf',
};

export const KNOWN_EXTENSIONS: readonly string[] = Object.keys(MIME_BY_EXTENSION);

/** `report.PDF` → `application/pdf`; `undefined` when the extension is not one we know. */
export function mimeFromFileName(name: string): string | undefined {
  const dot = name.lastIndexOf('.');
  const ext = name.slice(dot + 1).toLowerCase();
  return dot !== -1 && Object.hasOwn(MIME_BY_EXTENSION, ext) ? MIME_BY_EXTENSION[ext] : undefined;
}

/** The type a URL's path names (its query and fragment say nothing about it). */
export function mimeFromUrl(url: string): string | undefined {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return undefined;
  }
  return mimeFromFileName(pathname.slice(pathname.lastIndexOf('/') + 1));
}
