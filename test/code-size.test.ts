// Size limits the brief sets for src/: no function body over 100 lines, no file over 450. A listed
// exception must still be over its limit (the list cannot go stale); each names why it stays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

const MAX_FUNCTION_LINES = 100;
const MAX_FILE_LINES = 450;

/** `path name` of functions allowed over the limit for now, and why. */
const LONG_FUNCTIONS: Record<string, string> = {};
/** Files allowed over the limit for now, and why. */
const LONG_FILES: Record<string, string> = {};

function sources(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return sources(path);
      return path.endsWith('.ts') || path.endsWith('.tsx') ? [path.split('\\').join('/')] : [];
    });
}

type Body = ts.FunctionLikeDeclaration & { body: ts.Node };

function nameOf(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) {
    const owner = node.parent && ts.isClassLike(node.parent) && node.parent.name ? `${node.parent.name.text}.` : '';
    return owner + node.name.getText();
  }
  if (ts.isConstructorDeclaration(node)) return `${node.parent.name?.text ?? '(class)'}.constructor`;
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText();
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  return '(anonymous)';
}

function longFunctions(path: string, text: string): { key: string; lines: number }[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: { key: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as Body).body !== undefined) {
      const body = (node as Body).body;
      const first = file.getLineAndCharacterOfPosition(body.getStart(file)).line;
      const last = file.getLineAndCharacterOfPosition(body.getEnd()).line;
      const lines = last - first - 1;
      if (lines > MAX_FUNCTION_LINES) found.push({ key: `${path} ${nameOf(node)}`, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

// The console's sources (ui/src, TSX) follow the same limits.
const files = [...sources('src'), ...sources('ui/src')].map((path) => ({ path, text: readFileSync(path, 'utf8') }));

test(`no function body in src/ or ui/src/ is over ${MAX_FUNCTION_LINES} lines, but the listed ones`, () => {
  const found = files.flatMap((f) => longFunctions(f.path, f.text));
  const over = found.filter((f) => LONG_FUNCTIONS[f.key] === undefined).map((f) => `${f.key}: ${f.lines} lines`);
  const stale = Object.keys(LONG_FUNCTIONS).filter((key) => !found.some((f) => f.key === key));
  assert.deepEqual(over, [], 'split these into functions of one job each');
  assert.deepEqual(stale, [], 'these are no longer over the limit: remove them from LONG_FUNCTIONS');
});

test(`no file in src/ or ui/src/ is over ${MAX_FILE_LINES} lines, but the listed ones`, () => {
  const lengths = files.map((f) => ({ path: f.path, lines: f.text.split('\n').length - (f.text.endsWith('\n') ? 1 : 0) }));
  const over = lengths.filter((f) => f.lines > MAX_FILE_LINES && LONG_FILES[f.path] === undefined).map((f) => `${f.path}: ${f.lines} lines`);
  const stale = Object.keys(LONG_FILES).filter((path) => !lengths.some((f) => f.path === path && f.lines > MAX_FILE_LINES));
  assert.deepEqual(over, [], 'split these along their seams into modules of one job');
  assert.deepEqual(stale, [], 'these are no longer over the limit: remove them from LONG_FILES');
});
