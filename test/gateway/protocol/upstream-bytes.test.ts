// The byte-level field rewrite behind pass-through: only a real key matches, numbers match whole, and
// bytes that cannot be rewritten are dropped (the encoder then serialises the object).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { attachUpstreamBytes, readUpstreamBytes, renameModel, replaceJsonField, rewriteField } from '../../../src/gateway/protocol/upstream-bytes.ts';

describe('upstream bytes', () => {
  it('replaces the value of the first real key, its spacing kept', () => {
    assert.equal(replaceJsonField('{"id":"a", "model" :  "up","x":1}', 'model', '"up"', '"pub"'), '{"id":"a", "model" :  "pub","x":1}');
  });

  it('does not match a string value or an escaped key inside content', () => {
    const text = '{"content":"say \\"model\\":\\"up\\"","tag":"model","model":"up"}';
    assert.equal(replaceJsonField(text, 'model', '"up"', '"pub"'), '{"content":"say \\"model\\":\\"up\\"","tag":"model","model":"pub"}');
  });

  it('matches numbers whole', () => {
    assert.equal(replaceJsonField('{"created":170,"x":{"created":17}}', 'created', '17', '99'), '{"created":170,"x":{"created":99}}');
    assert.equal(replaceJsonField('{"created":17.5}', 'created', '17', '99'), undefined);
  });

  it('renameModel changes the object and its bytes, and drops bytes it cannot change', () => {
    const chunk = { model: 'gpt-4.1-2025-04-14' };
    attachUpstreamBytes(chunk, '{"model":"gpt-4.1-2025-04-14","extra":true}');
    renameModel(chunk, 'gpt-4.1');
    assert.equal(chunk.model, 'gpt-4.1');
    assert.equal(readUpstreamBytes(chunk), '{"model":"gpt-4.1","extra":true}');

    const other = { model: 'a' };
    attachUpstreamBytes(other, '{"model":"b"}');
    rewriteField(other, 'model', '"a"', '"c"');
    assert.equal(readUpstreamBytes(other), undefined);
  });
});
