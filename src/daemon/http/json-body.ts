// A request body read as the JSON object every door takes, or the 400 that names what is wrong.
import { GatewayError } from './errors.js';

export function jsonObject(raw: Buffer): Record<string, unknown> {
  try {
    const parsed = JSON.parse(raw.toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the body must be a JSON object');
    return parsed as Record<string, unknown>;
  } catch (e) {
    throw new GatewayError('invalid_request', `request body is not valid JSON: ${(e as Error).message}`, 'body');
  }
}
