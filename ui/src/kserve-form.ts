// The KServe infer form's pure part: a default shape and data for each input from the model's metadata,
// and the infer body from what the user typed. No DOM, so the unit tests run it under Node.
import type { TensorMeta } from './types.ts';

/** Variable dimensions (-1) become 1: the smallest request the model accepts. */
export function defaultShape(meta: TensorMeta): number[] {
  return meta.shape.map((d) => (d < 0 ? 1 : d));
}

const PREFILL_LIMIT = 1024;

/** Zeros (or empty strings, false) for small inputs, so one click infers; large inputs start empty. */
export function defaultData(meta: TensorMeta): string {
  const n = defaultShape(meta).reduce((a, b) => a * b, 1);
  if (n > PREFILL_LIMIT) return '';
  const zero = meta.datatype === 'BYTES' ? '""' : meta.datatype === 'BOOL' ? 'false' : '0';
  return `[${new Array(n).fill(zero).join(', ')}]`;
}

export function parseShape(text: string): number[] {
  const dims = text
    .split(/[\s,[\]]+/)
    .filter((p) => p !== '')
    .map(Number);
  if (dims.some((d) => !Number.isInteger(d) || d < 0)) throw new Error(`The shape "${text}" is not a list of whole numbers.`);
  return dims;
}

/** JSON (nested arrays allowed, flattened row-major) or numbers separated by commas or spaces. */
export function parseData(text: string, datatype: string): unknown[] {
  const trimmed = text.trim();
  let value: unknown;
  try {
    value = JSON.parse(trimmed.startsWith('[') ? trimmed : `[${trimmed}]`);
  } catch {
    value = trimmed.split(/[\s,]+/).filter((p) => p !== '');
  }
  const flat = (Array.isArray(value) ? value : [value]).flat(Number.POSITIVE_INFINITY) as unknown[];
  if (datatype === 'BYTES') return flat.map((v) => String(v));
  if (datatype === 'BOOL') return flat.map((v) => v === true || v === 'true' || v === 1);
  return flat.map((v) => {
    const n = Number(v);
    if (Number.isNaN(n)) throw new Error(`"${String(v)}" is not a number (the input is ${datatype}).`);
    return n;
  });
}

export interface InputDraft {
  shape: string;
  data: string;
}

export function inferBody(inputs: TensorMeta[], drafts: Record<string, InputDraft>): { inputs: { name: string; shape: number[]; datatype: string; data: unknown[] }[] } {
  return {
    inputs: inputs.map((meta) => {
      const draft = drafts[meta.name] ?? { shape: defaultShape(meta).join(', '), data: defaultData(meta) };
      const shape = parseShape(draft.shape);
      const data = parseData(draft.data, meta.datatype);
      const expected = shape.reduce((a, b) => a * b, 1);
      if (data.length !== expected) throw new Error(`Input ${meta.name}: shape [${shape.join(', ')}] needs ${expected} values, got ${data.length}.`);
      return { name: meta.name, shape, datatype: meta.datatype, data };
    }),
  };
}
