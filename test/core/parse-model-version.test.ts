// The model version a request names: parsed as both transports parse it, refused in Triton's words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../src/core/errors.ts';
import { parseModelVersion } from '../../src/core/parse-model-version.ts';

test('empty or absent is the latest version; digits are the version', () => {
  assert.equal(parseModelVersion(undefined), undefined);
  assert.equal(parseModelVersion(''), undefined);
  assert.equal(parseModelVersion('0'), 0);
  assert.equal(parseModelVersion('12'), 12);
});

test("anything else is INVALID_ARG with Triton's words first, which tritonclient's examples match on", () => {
  for (const raw of ['wrong_specification', '-1', '1.0', '99999999999999999999999']) {
    assert.throws(
      () => parseModelVersion(raw),
      (err: unknown) =>
        err instanceof HerdError &&
        err.code === 'INVALID_ARG' &&
        err.message.startsWith(`failed to get model version from specified version string '${raw}' (details: `) &&
        err.message.endsWith('), version should be an integral value > 0'),
    );
  }
});
