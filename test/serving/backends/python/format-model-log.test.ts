// A Python model's Logger record as one line of Herd's log: what the model logs (perhaps a client's text) is
// escaped, so it never starts a line of its own; levels the log settings turn off are dropped.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatModelLogRecord } from '../../../../src/serving/backends/python/format-model-log.ts';

const LEVELS = { log_info: true, log_warning: true, log_error: false, log_verbose_level: 0 };

test('a record is one line, the model file and line as Triton prints them', () => {
  const line = formatModelLogRecord('m/1/m_0', { type: 'log', level: 0, file: 'model.py', line: 18, message: 'hi\nherd: forged line' }, LEVELS);
  assert.equal(line, 'python model m/1/m_0 INFO model.py:18] hi\\nherd: forged line');
});

test('levels the settings turn off are dropped', () => {
  assert.equal(formatModelLogRecord('m/1/m_0', { type: 'log', level: 2, message: 'x' }, LEVELS), undefined);
  assert.equal(formatModelLogRecord('m/1/m_0', { type: 'log', level: 3, message: 'x' }, LEVELS), undefined);
});
