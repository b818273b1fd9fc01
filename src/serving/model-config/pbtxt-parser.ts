// Protobuf text format (the language of Triton's config.pbtxt), parsed against a message schema.
// Generic on purpose: model-config-schema.ts supplies ModelConfig's schema; this file knows no Triton field.
import { invalidArg } from '../../core/errors.ts';
import {
  type EnumSchema,
  type FieldSchema,
  type MessageSchema,
  type MessageValue,
  type ScalarType,
  type ScalarValue,
  type SingleValue,
  checkIntegerRange,
  indexPath,
  joinPath,
  keyPath,
  roundToFloat32,
  setMapEntry,
  zeroValue,
} from './message-schema.ts';

export interface SourceLocation {
  line: number;
  column: number;
}

export interface TextFormatResult {
  message: MessageValue;
  /** Where each field path (`input[0].dims`, `parameters["k"]`) was written, for error messages. */
  locations: Map<string, SourceLocation>;
}

type TokenKind = 'identifier' | 'integer' | 'float' | 'string' | 'symbol' | 'end';

interface Token extends SourceLocation {
  kind: TokenKind;
  /** Source text of the token (quotes included for strings). */
  text: string;
  /** Decoded bytes of a string literal. */
  bytes?: Uint8Array;
}

const SIMPLE_ESCAPES: Record<string, number> = {
  a: 7,
  b: 8,
  f: 12,
  n: 10,
  r: 13,
  t: 9,
  v: 11,
  '\\': 92,
  '?': 63,
  "'": 39,
  '"': 34,
};
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);
const isIdentStart = (c: string | undefined) => c !== undefined && /^[A-Za-z_]$/.test(c);
const isIdentPart = (c: string | undefined) => c !== undefined && /^[A-Za-z0-9_]$/.test(c);
const utf8 = new TextEncoder();
const utf8Strict = new TextDecoder('utf-8', { fatal: true });

/** Parses `text` as one `schema` message. Errors are INVALID_ARG `file:line:column: ...` naming the field path. */
export function parseTextFormat(text: string, schema: MessageSchema, file: string): TextFormatResult {
  const parser = new TextFormatParser(tokenize(text, file), file);
  return { message: parser.parseBody(schema, '', null), locations: parser.locations };
}

function fail(file: string, at: SourceLocation, message: string, path?: string): never {
  throw invalidArg(`${file}:${at.line}:${at.column}: ${message}${path ? ` (${path})` : ''}`, path ? { param: path } : undefined);
}

/** Splits the text into tokens the way protobuf's io::Tokenizer does (`#` comments, C-style strings and numbers). */
function tokenize(text: string, file: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  for (;;) {
    while (i < text.length) {
      const c = text[i];
      if (c === '\n') {
        i++;
        line++;
        lineStart = i;
      } else if (c === ' ' || c === '\t' || c === '\r' || c === '\v' || c === '\f') i++;
      else if (c === '#') {
        while (i < text.length && text[i] !== '\n') i++;
      } else break;
    }
    const at = { line, column: i - lineStart + 1 };
    if (i >= text.length) {
      tokens.push({ kind: 'end', text: '', ...at });
      return tokens;
    }
    const c = text[i];
    const start = i;
    if (isIdentStart(c)) {
      while (isIdentPart(text[i])) i++;
      tokens.push({ kind: 'identifier', text: text.slice(start, i), ...at });
    } else if (isDigit(c) || (c === '.' && isDigit(text[i + 1]))) {
      let kind: TokenKind = 'integer';
      if (c === '0' && (text[i + 1] === 'x' || text[i + 1] === 'X')) {
        i += 2;
        if (!isHex(text[i])) fail(file, at, `'${text.slice(start, i)}' must be followed by hex digits`);
        while (isHex(text[i])) i++;
      } else if (c === '0' && isDigit(text[i + 1])) {
        while (isDigit(text[i])) i++;
        if (/[89]/.test(text.slice(start, i))) fail(file, at, `number '${text.slice(start, i)}' starts with 0 and so must be octal, but has digits 8 or 9`);
      } else {
        while (isDigit(text[i])) i++;
        if (text[i] === '.') {
          kind = 'float';
          i++;
          while (isDigit(text[i])) i++;
        }
        if (text[i] === 'e' || text[i] === 'E') {
          kind = 'float';
          i++;
          if (text[i] === '+' || text[i] === '-') i++;
          if (!isDigit(text[i])) fail(file, at, `exponent of number '${text.slice(start, i)}' has no digits`);
          while (isDigit(text[i])) i++;
        }
        if (text[i] === 'f' || text[i] === 'F') {
          kind = 'float';
          i++;
        }
      }
      if (isIdentPart(text[i]) || text[i] === '.') fail(file, at, `malformed number '${text.slice(start, i + 1)}' (a space is needed between a number and what follows)`);
      tokens.push({ kind, text: text.slice(start, i), ...at });
    } else if (c === '"' || c === "'") {
      i = lexString(text, i, at, file, tokens);
    } else {
      i += 1;
      tokens.push({ kind: 'symbol', text: c, ...at });
    }
  }
}

/** Lexes one quoted literal with C escapes into bytes; returns the index after the closing quote. */
function lexString(text: string, start: number, at: SourceLocation, file: string, tokens: Token[]): number {
  const quote = text[start];
  const bytes: number[] = [];
  let i = start + 1;
  const pushCodePoint = (cp: number) => {
    for (const b of utf8.encode(String.fromCodePoint(cp))) bytes.push(b);
  };
  for (;;) {
    const c = text[i];
    if (c === undefined || c === '\n') fail(file, at, `unterminated string literal (strings cannot span lines; close it with ${quote})`);
    if (c === quote) break;
    if (c !== '\\') {
      const cp = text.codePointAt(i) ?? 0;
      pushCodePoint(cp);
      i += cp > 0xffff ? 2 : 1;
      continue;
    }
    const escapeAt = { line: at.line, column: at.column + (i - start) };
    const e = text[i + 1];
    i += 2;
    if (e !== undefined && e in SIMPLE_ESCAPES) bytes.push(SIMPLE_ESCAPES[e]);
    else if (e !== undefined && e >= '0' && e <= '7') {
      let digits = e;
      while (digits.length < 3 && text[i] >= '0' && text[i] <= '7') digits += text[i++];
      const value = parseInt(digits, 8);
      if (value > 255) fail(file, escapeAt, `octal escape '\\${digits}' is larger than one byte (\\377)`);
      bytes.push(value);
    } else if (e === 'x' || e === 'X') {
      let digits = '';
      while (digits.length < 2 && isHex(text[i])) digits += text[i++];
      if (!digits) fail(file, escapeAt, `'\\${e}' escape needs one or two hex digits`);
      bytes.push(parseInt(digits, 16));
    } else if (e === 'u' || e === 'U') {
      const width = e === 'u' ? 4 : 8;
      const digits = text.slice(i, i + width);
      if (digits.length !== width || ![...digits].every(isHex)) fail(file, escapeAt, `'\\${e}' escape needs exactly ${width} hex digits`);
      i += width;
      let cp = parseInt(digits, 16);
      // A UTF-16 surrogate pair written as two \u escapes is one code point.
      if (cp >= 0xd800 && cp <= 0xdbff && text[i] === '\\' && text[i + 1] === 'u' && /^[dD][c-fC-F][0-9a-fA-F]{2}$/.test(text.slice(i + 2, i + 6))) {
        cp = 0x10000 + ((cp - 0xd800) << 10) + (parseInt(text.slice(i + 2, i + 6), 16) - 0xdc00);
        i += 6;
      }
      if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) fail(file, escapeAt, `'\\${e}${digits}' is not a valid Unicode code point`);
      pushCodePoint(cp);
    } else {
      fail(file, escapeAt, `invalid escape sequence '\\${e ?? ''}' in string literal`);
    }
  }
  tokens.push({ kind: 'string', text: text.slice(start, i + 1), bytes: Uint8Array.from(bytes), ...at });
  return i + 1;
}

const locationOf = (token: Token): SourceLocation => ({ line: token.line, column: token.column });

function describe(token: Token): string {
  switch (token.kind) {
    case 'end':
      return 'end of input';
    case 'identifier':
      return `'${token.text}'`;
    case 'string':
      return `string ${token.text}`;
    case 'symbol':
      return `'${token.text}'`;
    default:
      return `number ${token.text}`;
  }
}

/** protobuf integer literal (decimal, 0x hex, leading-0 octal) as a bigint. */
function parseIntegerText(text: string): bigint {
  return /^0[0-7]+$/.test(text) ? BigInt(`0o${text.slice(1)}`) : BigInt(text);
}

class TextFormatParser {
  readonly locations = new Map<string, SourceLocation>();
  private pos = 0;

  constructor(
    private readonly tokens: Token[],
    private readonly file: string,
  ) {}

  private peek(): Token {
    return this.tokens[this.pos];
  }
  private next(): Token {
    return this.tokens[Math.min(this.pos++, this.tokens.length - 1)];
  }
  private trySymbol(symbol: string): boolean {
    const token = this.peek();
    if (token.kind !== 'symbol' || token.text !== symbol) return false;
    this.pos++;
    return true;
  }
  private isSymbol(symbol: string): boolean {
    const t = this.peek();
    return t.kind === 'symbol' && t.text === symbol;
  }
  private fail(at: SourceLocation, message: string, path?: string): never {
    return fail(this.file, at, message, path);
  }

  /** Fields until `close` (or the end of input at top level); `;` and `,` may separate fields. */
  parseBody(schema: MessageSchema, path: string, close: { symbol: string; open: Token } | null): MessageValue {
    const message: MessageValue = {};
    for (;;) {
      const token = this.peek();
      if (close && this.trySymbol(close.symbol)) return message;
      if (token.kind === 'end') {
        if (!close) return message;
        this.fail(token, `unexpected end of input: '${close.open.text}' opened at ${close.open.line}:${close.open.column} is never closed with '${close.symbol}'`, path);
      }
      this.parseField(schema, message, path);
      if (!this.trySymbol(';')) this.trySymbol(',');
    }
  }

  private parseField(schema: MessageSchema, message: MessageValue, path: string): void {
    const nameToken = this.next();
    if (nameToken.kind !== 'identifier') {
      const hint = nameToken.kind === 'symbol' && nameToken.text === '[' ? ' (extension and Any fields are not supported)' : '';
      this.fail(nameToken, `expected a field name of ${schema.name}, got ${describe(nameToken)}${hint}`, path);
    }
    const field = schema.byName.get(nameToken.text);
    if (!field) this.fail(nameToken, `unknown field '${nameToken.text}' in ${schema.name}`, path);
    const fieldPath = joinPath(path, field.name);
    this.checkPresence(schema, message, field, nameToken, path);
    if (!this.locations.has(fieldPath)) this.locations.set(fieldPath, locationOf(nameToken));

    const isMessage = field.type.kind === 'message' || field.label === 'map';
    if (!this.trySymbol(':') && !isMessage) {
      this.fail(this.peek(), `expected ':' after field '${field.name}', got ${describe(this.peek())}`, fieldPath);
    }
    if (!this.isSymbol('[')) {
      this.storeValue(field, message, fieldPath);
      return;
    }
    const open = this.next();
    if (field.label === 'singular') this.fail(open, `field '${field.name}' is not repeated, so it cannot take a [list]`, fieldPath);
    if (this.trySymbol(']')) {
      message[field.name] ??= field.label === 'map' ? {} : [];
      return;
    }
    for (;;) {
      this.storeValue(field, message, fieldPath);
      if (this.trySymbol(']')) return;
      if (!this.trySymbol(',')) {
        const token = this.peek();
        const why = token.kind === 'end' ? `'[' opened at ${open.line}:${open.column} is never closed` : `got ${describe(token)}`;
        this.fail(token, `expected ',' or ']' in the list of field '${field.name}': ${why}`, fieldPath);
      }
    }
  }

  /** protobuf rejects a singular field written twice and two members of one oneof. */
  private checkPresence(schema: MessageSchema, message: MessageValue, field: FieldSchema, at: Token, path: string): void {
    if (field.label === 'singular' && message[field.name] !== undefined) {
      this.fail(at, `field '${field.name}' of ${schema.name} is not repeated but is specified more than once`, joinPath(path, field.name));
    }
    if (field.oneof === undefined) return;
    const other = schema.fields.find((f) => f.oneof === field.oneof && f !== field && message[f.name] !== undefined);
    if (other) {
      this.fail(at, `field '${field.name}' is specified along with field '${other.name}', but only one member of oneof '${field.oneof}' may be set`, joinPath(path, field.name));
    }
  }

  /** One value (or one list element) of `field`, stored where its label says. */
  private storeValue(field: FieldSchema, message: MessageValue, fieldPath: string): void {
    const start = this.peek();
    if (field.label === 'map') {
      const entries = (message[field.name] ??= {}) as MessageValue;
      const entryPath = indexPath(fieldPath, Object.keys(entries).length);
      const entry = this.parseMessageValue(field.entry!, field.name, entryPath);
      const keyField = field.entry!.fields[0];
      const key = String(entry.key ?? zeroValue(keyField.type));
      const value = entry.value ?? (field.type.kind === 'message' ? {} : zeroValue(field.type));
      setMapEntry(entries, key, value as SingleValue);
      this.locations.set(keyPath(fieldPath, key), locationOf(start));
      return;
    }
    if (field.label === 'repeated') {
      const list = (message[field.name] ??= []) as SingleValue[];
      const elementPath = indexPath(fieldPath, list.length);
      this.locations.set(elementPath, locationOf(start));
      list.push(this.parseSingle(field, elementPath));
      return;
    }
    message[field.name] = this.parseSingle(field, fieldPath);
  }

  private parseSingle(field: FieldSchema, path: string): SingleValue {
    const type = field.type;
    if (type.kind === 'message') return this.parseMessageValue(type.message, field.name, path);
    if (type.kind === 'enum') return this.parseEnum(type.enum, field.name, path);
    return this.parseScalar(field, type.scalar, path);
  }

  private parseMessageValue(schema: MessageSchema, fieldName: string, path: string): MessageValue {
    const open = this.next();
    const symbol = open.kind === 'symbol' && open.text === '{' ? '}' : open.kind === 'symbol' && open.text === '<' ? '>' : undefined;
    if (!symbol) this.fail(open, `expected '{' to start the ${schema.name} of field '${fieldName}', got ${describe(open)}`, path);
    return this.parseBody(schema, path, { symbol, open });
  }

  private parseEnum(schema: EnumSchema, fieldName: string, path: string): string {
    const valid = `valid values: ${[...schema.byName.keys()].join(', ')}`;
    const negative = this.trySymbol('-');
    const token = this.next();
    if (token.kind === 'identifier' && !negative) {
      if (schema.byName.has(token.text)) return token.text;
      this.fail(token, `invalid value '${token.text}' for ${schema.name} field '${fieldName}'; ${valid}`, path);
    }
    if (token.kind === 'integer') {
      const number = Number(parseIntegerText(token.text)) * (negative ? -1 : 1);
      const name = schema.byNumber.get(number);
      if (name !== undefined) return name;
      this.fail(token, `invalid number ${number} for ${schema.name} field '${fieldName}'; ${valid}`, path);
    }
    return this.fail(token, `expected a ${schema.name} value for field '${fieldName}', got ${describe(token)}; ${valid}`, path);
  }

  private parseScalar(field: FieldSchema, scalar: ScalarType, path: string): ScalarValue {
    if (scalar === 'string') {
      const first = this.next();
      if (first.kind !== 'string') this.fail(first, `expected a quoted string for field '${field.name}', got ${describe(first)}`, path);
      const parts = [first.bytes!];
      while (this.peek().kind === 'string') parts.push(this.next().bytes!);
      const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
      parts.reduce((offset, p) => {
        bytes.set(p, offset);
        return offset + p.length;
      }, 0);
      try {
        return utf8Strict.decode(bytes);
      } catch {
        return this.fail(first, `string for field '${field.name}' is not valid UTF-8`, path);
      }
    }
    if (scalar === 'bool') {
      const token = this.next();
      if (token.kind === 'identifier' && ['true', 'True', 't'].includes(token.text)) return true;
      if (token.kind === 'identifier' && ['false', 'False', 'f'].includes(token.text)) return false;
      if (token.kind === 'integer' && parseIntegerText(token.text) <= 1n) return parseIntegerText(token.text) === 1n;
      return this.fail(token, `expected true or false for bool field '${field.name}', got ${describe(token)}`, path);
    }
    const start = this.peek();
    const negative = this.trySymbol('-');
    const token = this.next();
    if (scalar === 'float' || scalar === 'double') {
      let value: number;
      if (token.kind === 'float') value = Number(token.text.replace(/[fF]$/, ''));
      else if (token.kind === 'integer') value = Number(parseIntegerText(token.text));
      else if (token.kind === 'identifier' && /^(inf|infinity)$/i.test(token.text)) value = Infinity;
      else if (token.kind === 'identifier' && /^nan$/i.test(token.text)) value = NaN;
      else return this.fail(token, `expected a number for ${scalar} field '${field.name}', got ${describe(token)}`, path);
      if (negative) value = -value;
      return scalar === 'float' ? roundToFloat32(value) : value;
    }
    if (token.kind !== 'integer') this.fail(token, `expected an integer for ${scalar} field '${field.name}', got ${describe(token)}`, path);
    const value = negative ? -parseIntegerText(token.text) : parseIntegerText(token.text);
    const problem = checkIntegerRange(scalar, value);
    if (problem) this.fail(start, `${problem} for field '${field.name}'`, path);
    return Number(value);
  }
}
