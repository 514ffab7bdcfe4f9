// What the daemon lets the monitor see of a request's headers: credentials reduced to their scheme
// and last four characters, long values cut, a bounded number of headers.
import { describe, expect, it } from 'vitest';
import { maskHeaders } from '../../src/daemon/observe/events.js';

describe('maskHeaders', () => {
  it('masks every header that may carry a credential, keeping the scheme and the last four characters', () => {
    const key = 'sk-proxy-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
    const out = maskHeaders({
      authorization: `Bearer ${key}`, 'x-api-key': key, 'x-goog-api-key': 'AIzaSyA-1234567890abcdefWXYZ', cookie: 'session=abcdefghijklmnop',
      'proxy-authorization': 'Basic dXNlcjpwYXNzd29yZA==', 'x-custom-token': 'short', 'content-type': 'application/json', 'user-agent': 'OpenAI/JS 7.57.0',
    });
    expect(out).toEqual({
      authorization: 'Bearer …6789', 'x-api-key': '…6789', 'x-goog-api-key': '…WXYZ', cookie: '…mnop',
      'proxy-authorization': 'Basic …ZA==', 'x-custom-token': '…', 'content-type': 'application/json', 'user-agent': 'OpenAI/JS 7.57.0',
    });
    expect(JSON.stringify(out)).not.toContain('AbCdEf');
  });

  it('joins repeated headers, cuts long values and keeps at most 40 headers', () => {
    const many = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`x-h${i}`, 'v']));
    expect(Object.keys(maskHeaders(many))).toHaveLength(40);
    expect(maskHeaders({ accept: ['a', 'b'] })).toEqual({ accept: 'a, b' });
    expect(maskHeaders({ 'x-long': 'y'.repeat(500) })['x-long']).toBe(`${'y'.repeat(200)}…`);
  });
});
