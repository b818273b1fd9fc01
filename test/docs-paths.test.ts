// The maps a maintainer reads (docs/architecture.md, AGENTS.md, docs/security.md) name files that exist: a path that moved
// or was deleted fails here, not in a newcomer's first hour.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const ROOTS = ['src/', 'test/', 'docs/', 'bench/', 'scripts/', 'examples/', 'bin/', '.ci/', 'ui/'];
/** Names the docs mention as things that must not exist, or as placeholders (the user's own herd.yaml). */
const NOT_FILES = new Set(['utils.ts', 'herd.yaml']);

function listFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) listFiles(path, out);
    else out.push(path.split('\\').join('/'));
  }
  return out;
}

const sources = listFiles('src');

/** Backticked file paths: a root-relative path must exist as written; a shorter one must end some file under src/. */
function missingPaths(doc: string): string[] {
  const text = readFileSync(doc, 'utf8');
  const named = [...text.matchAll(/`([A-Za-z0-9_.\-/]+\.(?:ts|tsx|mjs|md|json|yaml|sh))`/g)].map((m) => m[1] as string);
  return [...new Set(named)].filter((path) => {
    if (NOT_FILES.has(path)) return false;
    if (ROOTS.some((root) => path.startsWith(root)) || !path.includes('/')) {
      return !(existsSync(path) || (!path.includes('/') && sources.some((s) => s.endsWith(`/${path}`))));
    }
    return !sources.some((s) => s.endsWith(`/${path}`));
  });
}

for (const doc of ['docs/architecture.md', 'AGENTS.md', 'docs/security.md']) {
  test(`every file ${doc} names exists`, () => {
    assert.deepEqual(missingPaths(doc), []);
  });
}

/** The flows docs/architecture.md walks (issue #27): a heading `### Flow N · …` each, in this order. */
const FLOWS = ['KServe HTTP infer', 'gRPC ModelInfer', 'Chat completion stream', 'Anthropic Messages stream', 'Responses, bridged', 'Embeddings', 'An ensemble with an `llm` step'];

/** The text of each `### ` section of a markdown page, by its heading. */
function sections(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of text.split(/^### /m).slice(1)) {
    const newline = part.indexOf('\n');
    out.set(part.slice(0, newline).trim(), part.slice(newline + 1));
  }
  return out;
}

/** The ↩ in `text`. */
function marks(text: string): number {
  return text.split('↩').length - 1;
}

/**
 * A walk's stated count against its marks: each `**returns: N**` must equal the ↩ written since the
 * previous count (or the section's start), so a step added or removed without recounting fails here.
 * A gateway walk's subtotals `(entry a, gateway b, answer c)` must match its steps marked *entry* and
 * *answer* (the HTTP exchange's, patched apart from the rest).
 */
function countMismatches(body: string): string[] {
  const mismatches: string[] = [];
  let from = 0;
  for (const m of body.matchAll(/\*\*returns: (\d+)\*\*(?: \(entry (\d+), gateway (\d+), answer (\d+)\))?/g)) {
    const walk = body.slice(from, m.index);
    if (marks(walk) !== Number(m[1])) mismatches.push(`returns: ${m[1]}, but ${marks(walk)} ↩ marked`);
    if (m[2] !== undefined) {
      const parts = { entry: 0, gateway: 0, answer: 0 };
      for (const step of walk.split(/^\d+\. /m).slice(1)) {
        const part = step.startsWith('*entry*') ? 'entry' : step.startsWith('*answer*') ? 'answer' : 'gateway';
        parts[part] += marks(step);
      }
      const stated = { entry: Number(m[2]), gateway: Number(m[3]), answer: Number(m[4]) };
      if (JSON.stringify(parts) !== JSON.stringify(stated)) mismatches.push(`subtotals ${JSON.stringify(stated)}, but ${JSON.stringify(parts)} marked`);
    }
    from = (m.index as number) + m[0].length;
  }
  return mismatches;
}

test('docs/architecture.md walks the seven flows, each with its count of returns', () => {
  const found = sections(readFileSync('docs/architecture.md', 'utf8'));
  const flows = [...found].filter(([heading]) => heading.startsWith('Flow '));
  assert.deepEqual(
    flows.map(([heading]) => /^Flow (\d+) · /.exec(heading)?.[1]),
    FLOWS.map((_, i) => String(i + 1)),
    'headings `### Flow 1 · …` to `### Flow 7 · …`, in order',
  );
  flows.forEach(([heading, body], i) => {
    assert.ok(heading.includes(FLOWS[i] as string), `flow ${i + 1} is "${FLOWS[i]}", found "${heading}"`);
    assert.match(body, /\*\*returns: \d+\*\*/, `${heading}: states its returns`);
    assert.deepEqual(countMismatches(body), [], heading);
  });
});
