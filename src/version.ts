// The gateway's version: package.json is the one place it is written (src/ and dist/ both sit
// beside it, so the same relative URL finds it from either).
import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
}

export const VERSION: string = readVersion();
