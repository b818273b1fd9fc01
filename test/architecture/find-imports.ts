// Lists every module a source file reaches for — static, type-only, re-export, dynamic (string,
// template or concatenation), require, and `new URL('./x.mjs', import.meta.url)` worker entries —
// read with TypeScript's parser so a string that merely looks like an import is not one.
import ts from 'typescript';

export interface SourceText {
  /** Repository-relative, '/'-separated: 'src/gateway/flow/chat-gateway.ts'. */
  path: string;
  text: string;
}

/**
 * One reference to another module. `specifier` is the whole literal when the target is written
 * out; for a template or a concatenation it is the static prefix (`../http/` of `../http/${x}.ts`)
 * and `partial` is set; with no static prefix at all (`import(url)`) it is undefined.
 */
export interface ImportSite {
  line: number;
  kind: 'import' | 'import type' | 'export' | 'dynamic import' | 'require' | 'url';
  specifier: string | undefined;
  partial: boolean;
  /** The argument as written, for messages and for the list of deliberate computed imports. */
  expression: string;
}

const CODE_FILE = /\.(?:[cm]?[jt]s|tsx?|jsx)$/;

// Parsing is the slow part: each file is parsed once however many checks read it.
const parsed = new WeakMap<SourceText, ImportSite[]>();

export function findImports(file: SourceText): ImportSite[] {
  const known = parsed.get(file);
  if (known !== undefined) return known;
  const kind = /\.[cm]?js$/.test(file.path) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, false, kind);
  const sites: ImportSite[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const add = (node: ts.Node, siteKind: ImportSite['kind'], argument: ts.Expression | undefined) => {
    sites.push({ line: lineOf(node), kind: siteKind, ...readSpecifier(argument), expression: argument ? argument.getText(source) : '' });
  };

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      add(node, node.importClause?.isTypeOnly ? 'import type' : 'import', node.moduleSpecifier);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      add(node, 'export', node.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, 'require', node.moduleReference.expression);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, 'import type', node.argument.literal as ts.Expression);
    } else if (ts.isCallExpression(node)) {
      if (node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, 'dynamic import', node.arguments[0]);
      else if (isRequire(node.expression)) add(node, 'require', node.arguments[0]);
    } else if (ts.isNewExpression(node) && isImportMetaUrl(node)) {
      // new URL('./worker.mjs', import.meta.url): a Worker's entry, code loaded from here. A data file
      // (`../../package.json`) is read, not run, and is no import.
      const site = readSpecifier(node.arguments?.[0]);
      if (site.specifier !== undefined && (site.partial || CODE_FILE.test(site.specifier))) {
        sites.push({ line: lineOf(node), kind: 'url', ...site, expression: node.arguments?.[0]?.getText(source) ?? '' });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  parsed.set(file, sites);
  return sites;
}

function readSpecifier(argument: ts.Expression | undefined): { specifier: string | undefined; partial: boolean } {
  if (argument === undefined) return { specifier: undefined, partial: true };
  if (ts.isStringLiteralLike(argument)) return { specifier: argument.text, partial: false };
  if (ts.isTemplateExpression(argument)) return { specifier: argument.head.text === '' ? undefined : argument.head.text, partial: true };
  if (ts.isParenthesizedExpression(argument)) return readSpecifier(argument.expression);
  if (ts.isBinaryExpression(argument) && argument.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = readSpecifier(argument.left);
    return { specifier: left.specifier, partial: true };
  }
  return { specifier: undefined, partial: true };
}

function isRequire(callee: ts.Expression): boolean {
  if (ts.isIdentifier(callee)) return callee.text === 'require';
  // require.resolve('x') and import.meta.resolve('x') name a module as surely as an import does.
  if (ts.isPropertyAccessExpression(callee) && callee.name.text === 'resolve') {
    const target = callee.expression;
    return (ts.isIdentifier(target) && target.text === 'require') || (ts.isMetaProperty(target) && target.keywordToken === ts.SyntaxKind.ImportKeyword);
  }
  return false;
}

function isImportMetaUrl(node: ts.NewExpression): boolean {
  if (!ts.isIdentifier(node.expression) || node.expression.text !== 'URL') return false;
  const base = node.arguments?.[1];
  return base !== undefined && ts.isPropertyAccessExpression(base) && base.name.text === 'url' && ts.isMetaProperty(base.expression);
}
