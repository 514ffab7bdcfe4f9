// A cheap look into JSON text before deciding to parse it, for the usage taps: a relayed stream's
// events go to the client as they are, and parsing each one only to find the one that carries
// usage would cost more than relaying it.

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;

/**
 * True when `text` has the key `quotedKey` (with its quotes: `"usage"`) holding an object, not
 * `null` or a number. A key's quotes cannot occur unescaped inside a JSON string, so a match is a key
 * (or a string value, which the `:` after it rules out).
 */
export function holdsObject(text: string, quotedKey: string): boolean {
  for (let at = text.indexOf(quotedKey); at !== -1; at = text.indexOf(quotedKey, at + quotedKey.length)) {
    let i = at + quotedKey.length;
    while (isSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== 58 /* : */) continue;
    i++;
    while (isSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) === 123 /* { */) return true;
  }
  return false;
}
