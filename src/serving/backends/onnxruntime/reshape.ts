// Applies a config `reshape` to a concrete tensor shape, the way Triton core does: variable (-1) dims of
// the source layout are carried, in order, into the -1 dims of the target layout; the batch dim passes through.
import { invalidArg } from '../../../core/errors.ts';

export interface ReshapeRule {
  /** Layout the shape is in now, batch dim excluded (config `dims` for inputs, `reshape.shape` for outputs). */
  from: readonly number[];
  /** Layout wanted, batch dim excluded. */
  to: readonly number[];
  hasBatchDim: boolean;
}

/** The shape in the `to` layout; throws INVALID_ARG when the element count cannot be preserved. */
export function convertShapeForReshape(tensorName: string, shape: readonly number[], rule: ReshapeRule): number[] {
  const offset = rule.hasBatchDim ? 1 : 0;
  if (rule.hasBatchDim && shape.length === 0) {
    throw invalidArg(`tensor '${tensorName}' has no batch dimension but the model batches`);
  }
  const body = shape.slice(offset);
  const variable: number[] = [];
  rule.from.forEach((d, i) => {
    if (d === -1 && i < body.length) variable.push(body[i]);
  });
  const bodyCount = body.reduce((a, b) => a * b, 1);
  const fixedTo = rule.to.reduce((a, d) => (d === -1 ? a : a * d), 1);
  const wildcards = rule.to.filter((d) => d === -1).length;

  const out: number[] = rule.hasBatchDim ? [shape[0]] : [];
  for (const d of rule.to) {
    if (d !== -1) out.push(d);
    // More -1 in the target than values carried: a single remaining one takes whatever count is left.
    else if (variable.length > 0) out.push(variable.shift()!);
    else if (wildcards === 1 && fixedTo > 0 && bodyCount % fixedTo === 0) out.push(bodyCount / fixedTo);
    else throw invalidArg(`cannot reshape tensor '${tensorName}' of shape [${shape.join(', ')}] to [${rule.to.join(', ')}]`);
  }
  const outCount = out.slice(offset).reduce((a, b) => a * b, 1);
  if (outCount !== bodyCount) {
    throw invalidArg(`cannot reshape tensor '${tensorName}' of shape [${shape.join(', ')}] to [${rule.to.join(', ')}]: ` + `${bodyCount} elements per batch item vs ${outCount}`);
  }
  return out;
}
