import { describe, expect, it } from 'vitest';
import { isIdentityEncoding, isJsonContentType } from '../../src/ingest/content-type.js';

describe('isJsonContentType', () => {
  it.each([
    ['application/json', true],
    ['Application/JSON', true],
    ['application/json; charset=utf-8', true],
    ['application/vnd.api+json', true],
    ['application/jsonx', false],
    ['text/json', false],
    ['text/plain', false],
    ['multipart/form-data', false],
    ['', false],
    [undefined, false],
  ])('%s → %s', (header, expected) => {
    expect(isJsonContentType(header)).toBe(expected);
  });
});

describe('isIdentityEncoding', () => {
  it.each([[undefined, true], ['identity', true], ['', true], ['gzip', false], ['br', false]])('%s → %s', (header, expected) => {
    expect(isIdentityEncoding(header)).toBe(expected);
  });
});
