// A bridged attempt (the client's dialect is not the upstream's) and the members of the client's body the
// canonical request does not carry: each is dropped with a warning (x-herd-dropped) or refused, by the
// decoder's field table; a strict route refuses them all. Same-dialect upstreams never call this.
import { HerdError } from '../../core/errors.ts';
import type { ProviderRequest, ProviderWarning } from './provider.ts';

/** Warnings for what this bridge drops; throws UNSUPPORTED (a 400 naming the field) for what it must refuse. */
export function bridgeUnmodeled(req: ProviderRequest, upstream: string): ProviderWarning[] {
  const fields = req.request.unmodeled;
  if (fields === undefined || fields.length === 0) return [];
  const refused = fields.find((f) => f.bridged === 'refuse') ?? (req.strict === true ? fields[0] : undefined);
  if (refused !== undefined) {
    const why = refused.bridged === 'refuse' ? refused.reason : `the route is strict and ${upstream} cannot take it (${refused.reason})`;
    throw new HerdError('UNSUPPORTED', `${refused.param}: ${why}`, { param: refused.param });
  }
  return fields.map((f) => ({ param: f.param, message: `${upstream} cannot take '${f.param}' (${f.reason}); it was not sent` }));
}
