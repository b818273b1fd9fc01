// The request parser's cold-path JSON reader: exact bigints beyond 2^53, NaN/Infinity tokens, and
// syntax errors in rapidjson's words with its byte offset, so our messages match Triton's.
import { invalidArg } from '../errors.ts';

export type LosslessJsonValue = null | boolean | number | bigint | string | LosslessJsonValue[] | { [key: string]: LosslessJsonValue };

const MAX_DEPTH = 512;

/**
 * Parses `text`; throws INVALID_ARG "failed to parse the request JSON buffer: <why> at <byte offset>".
 * JSON.parse stays the fast path; this runs only when JSON.parse fails or an INT64/UINT64 tensor
 * holds an integer JSON.parse could not keep exact.
 */
export function parseLosslessJson(text: string): LosslessJsonValue {
  return new Parser(text).parseDocument();
}

class Parser {
  private pos = 0;
  private depth = 0;
  constructor(private readonly text: string) {}

  parseDocument(): LosslessJsonValue {
    this.skipSpace();
    if (this.pos >= this.text.length) this.fail('The document is empty.');
    const value = this.parseValue();
    this.skipSpace();
    if (this.pos < this.text.length) this.fail('The document root must not be followed by other values.');
    return value;
  }

  private fail(reason: string): never {
    // rapidjson reports byte offsets; report the same so messages match Triton's for non-ASCII bodies.
    const offset = Buffer.byteLength(this.text.slice(0, this.pos), 'utf8');
    throw invalidArg(`failed to parse the request JSON buffer: ${reason} at ${offset}`);
  }

  private skipSpace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      this.pos++;
    }
  }

  private parseValue(): LosslessJsonValue {
    const c = this.text[this.pos];
    if (c === '{') return this.parseObject();
    if (c === '[') return this.parseArray();
    if (c === '"') return this.parseString();
    if (c === '-' || (c >= '0' && c <= '9')) return this.parseNumber();
    for (const [word, value] of LITERALS) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return value;
      }
    }
    return this.fail('Invalid value.');
  }

  private enter(): void {
    if (++this.depth > MAX_DEPTH) this.fail(`JSON nesting depth exceeds maximum allowed limit (${MAX_DEPTH}).`);
  }

  private parseObject(): LosslessJsonValue {
    this.enter();
    this.pos++; // {
    const out: { [key: string]: LosslessJsonValue } = {};
    this.skipSpace();
    if (this.text[this.pos] === '}') {
      this.pos++;
      this.depth--;
      return out;
    }
    for (;;) {
      if (this.text[this.pos] !== '"') this.fail('Missing a name for object member.');
      const key = this.parseString();
      this.skipSpace();
      if (this.text[this.pos] !== ':') this.fail('Missing a colon after a name of object member.');
      this.pos++;
      this.skipSpace();
      const value = this.parseValue();
      // A plain assignment to "__proto__" would replace the prototype; JSON.parse makes a property.
      if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      else out[key] = value;
      this.skipSpace();
      const next = this.text[this.pos];
      if (next === ',') {
        this.pos++;
        this.skipSpace();
      } else if (next === '}') {
        this.pos++;
        this.depth--;
        return out;
      } else {
        this.fail("Missing a comma or '}' after an object member.");
      }
    }
  }

  private parseArray(): LosslessJsonValue {
    this.enter();
    this.pos++; // [
    const out: LosslessJsonValue[] = [];
    this.skipSpace();
    if (this.text[this.pos] === ']') {
      this.pos++;
      this.depth--;
      return out;
    }
    for (;;) {
      out.push(this.parseValue());
      this.skipSpace();
      const next = this.text[this.pos];
      if (next === ',') {
        this.pos++;
        this.skipSpace();
      } else if (next === ']') {
        this.pos++;
        this.depth--;
        return out;
      } else {
        this.fail("Missing a comma or ']' after an array element.");
      }
    }
  }

  private parseString(): string {
    const t = this.text;
    const start = this.pos;
    let escaped = false;
    this.pos++; // opening quote
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x22) {
        this.pos++;
        const raw = t.slice(start, this.pos);
        if (!escaped) return raw.slice(1, -1);
        try {
          return JSON.parse(raw) as string; // decodes escapes; only reached for escaped strings
        } catch {
          this.pos = start;
          return this.fail('Invalid escape character in string.');
        }
      }
      if (c === 0x5c) {
        escaped = true;
        this.pos += 2;
        continue;
      }
      if (c < 0x20) this.fail('Invalid encoding in string.');
      this.pos++;
    }
    this.pos = start;
    return this.fail('Missing a closing quotation mark in string.');
  }

  private parseNumber(): number | bigint {
    const t = this.text;
    const start = this.pos;
    if (t[this.pos] === '-') {
      this.pos++;
      for (const [word, value] of NEGATIVE_LITERALS) {
        if (t.startsWith(word, this.pos)) {
          this.pos += word.length;
          return value;
        }
      }
    }
    if (t[this.pos] === '0') this.pos++;
    else if (isDigit(t, this.pos)) while (isDigit(t, this.pos)) this.pos++;
    else this.fail('Invalid value.');
    let integral = true;
    if (t[this.pos] === '.') {
      integral = false;
      this.pos++;
      if (!isDigit(t, this.pos)) this.fail('Miss fraction part in number.');
      while (isDigit(t, this.pos)) this.pos++;
    }
    if (t[this.pos] === 'e' || t[this.pos] === 'E') {
      integral = false;
      this.pos++;
      if (t[this.pos] === '+' || t[this.pos] === '-') this.pos++;
      if (!isDigit(t, this.pos)) this.fail('Miss exponent in number.');
      while (isDigit(t, this.pos)) this.pos++;
    }
    const literal = t.slice(start, this.pos);
    const value = Number(literal);
    return integral && !Number.isSafeInteger(value) ? BigInt(literal) : value;
  }
}

const LITERALS: readonly (readonly [string, LosslessJsonValue])[] = [
  ['true', true],
  ['false', false],
  ['null', null],
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['Inf', Infinity],
];
const NEGATIVE_LITERALS: readonly (readonly [string, number])[] = [
  ['Infinity', -Infinity],
  ['Inf', -Infinity],
];

function isDigit(text: string, pos: number): boolean {
  const c = text.charCodeAt(pos);
  return c >= 0x30 && c <= 0x39;
}
