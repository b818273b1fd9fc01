// Key material: format and entropy of new keys, the stored hash and prefix, OpenAI-style masking.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  constantTimeEqualHex,
  createKeySecret,
  createPublicId,
  displayPrefixOf,
  hashKeySecret,
  KEY_PREFIX,
  looksLikeKeySecret,
} from '../../../src/gateway/keys/create-key-secret.ts';
import { maskKey, quoteUntrusted } from '../../../src/gateway/keys/mask-key.ts';

test('a new secret is sk-herd-<public id>-<43 base62>; its hash is SHA-256 hex and its prefix the id plus 4 characters', () => {
  const id = createPublicId('hk');
  assert.match(id, /^hk_[0-9A-Za-z]{16}$/);
  assert.match(createPublicId('tm'), /^tm_[0-9A-Za-z]{16}$/);
  const { secret, hash, prefix } = createKeySecret(id);
  assert.match(secret, new RegExp(`^sk-herd-${id}-[0-9A-Za-z]{43}$`));
  assert.equal(hash, createHash('sha256').update(secret).digest('hex'));
  assert.equal(hashKeySecret(secret), hash);
  assert.equal(prefix, `sk-herd-${id}-${secret.slice(-43, -39)}`);
  assert.ok(looksLikeKeySecret(secret));
  assert.ok(!looksLikeKeySecret(prefix));
});

test('a secret made before #28 (sk-herd- plus 43) keeps its 12-character display prefix', () => {
  const legacy = `${KEY_PREFIX}${'A'.repeat(43)}`;
  assert.equal(displayPrefixOf(legacy), legacy.slice(0, 12));
  assert.ok(looksLikeKeySecret(legacy));
  assert.ok(!looksLikeKeySecret(legacy.slice(0, 12)));
});

test('keys are distinct and draw on the whole base62 alphabet', () => {
  const secrets = Array.from({ length: 200 }, () => createKeySecret().secret);
  assert.equal(new Set(secrets).size, 200);
  const chars = new Set(secrets.join(''));
  for (const c of '0aZz9') assert.ok(chars.has(c), `character ${c} never appeared`);
});

test('constantTimeEqualHex compares digests and rejects different lengths', () => {
  const a = hashKeySecret('a');
  assert.ok(constantTimeEqualHex(a, hashKeySecret('a')));
  assert.ok(!constantTimeEqualHex(a, hashKeySecret('b')));
  assert.ok(!constantTimeEqualHex(a, a.slice(2)));
});

test('maskKey shows sk-herd- plus 2 and the last 4 characters of a Herd key, less of any other token, nothing of a short one', () => {
  assert.equal(maskKey('sk-herd-abCDEFGHIJKLMNOPQRSTUVWXYZ0123456789wxyz'), 'sk-herd-ab****wxyz');
  assert.equal(maskKey('sk-proj-0123456789abcdefghij'), 'sk-p****ghij', 'a foreign token shows only 4 leading characters');
  assert.equal(maskKey('hunter2'), '****');
  assert.equal(maskKey(''), '****');
  assert.equal(maskKey('sk-herd-\n\u0000xxxxxxxxxxxxxxxxxxxx\r\nEND'), 'sk-herd-??****?END');
});

test('quoteUntrusted shows names and display prefixes, masks anything longer that looks like a key', () => {
  assert.equal(quoteUntrusted('gpt-4.1'), "'gpt-4.1'");
  assert.equal(quoteUntrusted('sk-herd-Ab3x'), "'sk-herd-Ab3x'");
  assert.equal(quoteUntrusted('sk-herd-abCDEFGHIJKLMNOPQRSTUVWXYZ0123456789wxyz'), "'sk-herd-ab****wxyz'");
  assert.equal(quoteUntrusted('a\nb'), "'a?b'");
  assert.equal(quoteUntrusted('m'.repeat(150)), `'${'m'.repeat(100)}…'`);
});
