// docs/errors.md against the mapping code, as Fastify checks docs/Reference/Errors.md against lib/errors.js:
// every kind (code, code:reason, upstream:failure) is a row, every row is a kind, and every cell is what
// the transport's mapping answers for an error of that kind. A new column needs one entry in COLUMNS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ERROR_CODES, ERROR_REASONS, HerdError, type ErrorCode, type ErrorReason } from '../../src/core/errors.ts';
import { UPSTREAM_FAILURES, UpstreamError, type UpstreamFailure } from '../../src/gateway/protocol/upstream-error.ts';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { convertErrorToServiceError } from '../../src/grpc/map-grpc-status.ts';
import { mapErrorToAnthropic, mapErrorToAnthropicShape } from '../../src/http/map-anthropic-error.ts';
import { mapErrorToKserve } from '../../src/http/map-kserve-error.ts';
import { mapErrorToOpenAI, mapErrorToOpenAIShape } from '../../src/http/map-openai-error.ts';

const CATALOG = 'docs/errors.md';
const ABSENT = '—';

interface CatalogTable {
  header: string[];
  rows: Map<string, Record<string, string>>;
}

/** The Markdown table under `## <heading>`, keyed by the first column with its backticks removed. */
function parseCatalogTable(markdown: string, heading: string): CatalogTable {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === `## ${heading}`);
  assert.ok(start >= 0, `${CATALOG} has no "## ${heading}" section`);
  const tableLines: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('## ')) break;
    if (line.startsWith('|')) tableLines.push(line);
    else if (tableLines.length > 0) break;
  }
  const cells = (line: string) => splitRow(line).map((c) => c.trim());
  const [headerLine, separator, ...body] = tableLines;
  assert.ok(headerLine !== undefined && separator !== undefined, `the "${heading}" section holds no table`);
  const header = cells(headerLine);
  const rows = new Map<string, Record<string, string>>();
  for (const line of body) {
    const values = cells(line);
    assert.equal(values.length, header.length, `row has ${values.length} cells, the header ${header.length}: ${line}`);
    const row = Object.fromEntries(header.map((h, i) => [h, values[i] as string]));
    const kind = unquote(values[0] as string);
    assert.ok(!rows.has(kind), `${kind} is listed twice`);
    rows.set(kind, row);
  }
  return { header, rows };
}

/** Splits on the pipes that separate cells, not those inside `code spans`. */
function splitRow(line: string): string[] {
  const out: string[] = [];
  let cell = '';
  let inCode = false;
  for (const ch of line.trim().replace(/^\||\|$/g, '')) {
    if (ch === '`') inCode = !inCode;
    if (ch === '|' && !inCode) {
      out.push(cell);
      cell = '';
    } else cell += ch;
  }
  out.push(cell);
  return out;
}

const unquote = (cell: string) => cell.replace(/^`|`$/g, '');

/** One error of each kind, as the code makes them. */
function sampleErrors(): Map<string, HerdError> {
  const samples = new Map<string, HerdError>();
  for (const code of ERROR_CODES) samples.set(code, new HerdError(code, 'sample', { retryAfterSeconds: 3 }));
  for (const reason of ERROR_REASONS) samples.set(`${codeOfReason(reason)}:${reason}`, new HerdError(codeOfReason(reason), 'sample', { reason, retryAfterSeconds: 3 }));
  for (const failure of UPSTREAM_FAILURES) samples.set(`upstream:${failure}`, new UpstreamError('sample', { provider: 'p', failure, retryAfterSeconds: 3 }));
  return samples;
}

/** The code each reason refines (a reason on another code would be a bug where the error is made). */
function codeOfReason(reason: ErrorReason): ErrorCode {
  const codes: Record<ErrorReason, ErrorCode> = {
    invalid_api_key: 'UNAUTHENTICATED',
    key_rotated: 'UNAUTHENTICATED',
    key_expired: 'UNAUTHENTICATED',
    key_revoked: 'UNAUTHENTICATED',
    key_blocked: 'PERMISSION_DENIED',
    address_not_allowed: 'PERMISSION_DENIED',
    model_not_allowed: 'PERMISSION_DENIED',
    admin_only: 'PERMISSION_DENIED',
    csrf_failed: 'PERMISSION_DENIED',
    unknown_object: 'NOT_FOUND',
  };
  return codes[reason];
}

const orAbsent = (value: string | null) => (value === null ? ABSENT : `\`${value}\``);

/** What each checked column must say for an error; columns not listed here fail the test until they get a check. */
const COLUMNS: Record<string, ((error: HerdError) => string) | null> = {
  Kind: null,
  'KServe HTTP': (error) => String(mapErrorToKserve(error).status),
  'KServe gRPC': (error) => GrpcStatus[convertErrorToServiceError(error).code],
  'OpenAI status': (error) => String(mapErrorToOpenAI(error).status),
  'OpenAI type': (error) => orAbsent(mapErrorToOpenAI(error).body.error.type),
  'OpenAI code': (error) => orAbsent(mapErrorToOpenAI(error).body.error.code),
  'Anthropic status': (error) => String(mapErrorToAnthropic(error).status),
  'Anthropic type': (error) => orAbsent(mapErrorToAnthropic(error).body.error.type),
  'Retry-After': (error) => (mapErrorToOpenAIShape(error).retry ? 'yes' : 'no'),
  'Message pattern(s)': null,
};

const table = parseCatalogTable(readFileSync(CATALOG, 'utf8'), 'Catalog');
const samples = sampleErrors();

test('the catalog lists every error kind, and only those', () => {
  const missing = [...samples.keys()].filter((k) => !table.rows.has(k));
  const unknown = [...table.rows.keys()].filter((k) => !samples.has(k));
  assert.deepEqual(missing, [], `kinds missing from ${CATALOG}`);
  assert.deepEqual(unknown, [], `rows in ${CATALOG} that are no error kind`);
});

test('every column of the catalog is checked', () => {
  assert.deepEqual(
    table.header.filter((h) => !(h in COLUMNS)),
    [],
    'columns without a check in COLUMNS',
  );
  assert.deepEqual(
    Object.keys(COLUMNS).filter((h) => !table.header.includes(h)),
    [],
    `columns missing from ${CATALOG}`,
  );
});

test('every cell says what the mapping answers', () => {
  const wrong: string[] = [];
  for (const [kind, error] of samples) {
    const row = table.rows.get(kind);
    if (!row) continue;
    for (const [column, expected] of Object.entries(COLUMNS)) {
      if (expected === null) continue;
      const want = expected(error);
      if (row[column] !== want) wrong.push(`${kind} / ${column}: the catalog says ${row[column]}, the code answers ${want}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('the one Retry-After column holds for both dialects: Anthropic waits where OpenAI does', () => {
  const differ = [...samples].filter(([, error]) => mapErrorToAnthropicShape(error).retry !== mapErrorToOpenAIShape(error).retry).map(([kind]) => kind);
  assert.deepEqual(differ, []);
});

test('an upstream failure row names the code its error carries', () => {
  for (const failure of UPSTREAM_FAILURES) {
    const error = new UpstreamError('sample', { provider: 'p', failure: failure as UpstreamFailure });
    const message = table.rows.get(`upstream:${failure}`)?.['Message pattern(s)'] ?? '';
    assert.ok(message.startsWith(`code \`${error.code}\``), `upstream:${failure} should start "code \`${error.code}\`": ${message}`);
  }
});

test('the parser reads a new column and refuses a row that does not fit the header', () => {
  const doc = ['## Catalog', '', '| Kind | KServe HTTP | gRPC |', '| --- | --- | --- |', '| `INVALID_ARG` | 400 | `INVALID_ARGUMENT` |', ''].join('\n');
  assert.deepEqual(parseCatalogTable(doc, 'Catalog').rows.get('INVALID_ARG'), { Kind: '`INVALID_ARG`', 'KServe HTTP': '400', gRPC: '`INVALID_ARGUMENT`' });
  assert.throws(() => parseCatalogTable(doc.replace('| 400 |', '| 400 | 1 |'), 'Catalog'), /row has 4 cells/);
  // A pipe inside a code span belongs to the cell.
  assert.deepEqual(splitRow('| `a|b` | c |'), [' `a|b` ', ' c ']);
});
