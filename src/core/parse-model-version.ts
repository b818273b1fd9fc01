// The model version a request names, parsed once for both transports, refused in Triton's words
// (core GetModelVersionFromString), which tritonclient's examples match on.
import { invalidArg } from './errors.ts';

function refuse(raw: string, details: string): never {
  throw invalidArg(`failed to get model version from specified version string '${raw}' (details: ${details}), version should be an integral value > 0`);
}

/** '' or absent: the latest ready version (undefined); else a non-negative integer. */
export function parseModelVersion(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^[0-9]+$/.test(raw)) refuse(raw, 'versions are non-negative integers');
  const version = Number(raw);
  if (!Number.isSafeInteger(version)) refuse(raw, `out of range, at most ${Number.MAX_SAFE_INTEGER}`);
  return version;
}
