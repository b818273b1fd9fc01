// herd.yaml's `server.ui`: the web console at <base>/ui/ on the HTTP port (issue 30): on or off, the base path a
// reverse proxy mounts Herd under, how long a sign-in lasts and how many failed sign-ins an address may make.
import { z } from 'zod';

/** `/tools/herd`: starts with `/`, no `..`, no `//`, no trailing `/`; '' for none. Undefined when invalid. */
export function normalizeBasePath(text: string): string | undefined {
  const path = text.trim().replace(/\/+$/, '');
  if (path === '') return '';
  if (!path.startsWith('/') || path.includes('//') || path.split('/').includes('..') || path.split('/').includes('.')) return undefined;
  if (!/^[A-Za-z0-9/._~!$&'()*+,;=:@%-]+$/.test(path)) return undefined;
  return path;
}

export const uiConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(true).describe('serve the web console at <base>/ui/ on the HTTP port (--no-ui turns it off)'),
    base_path: z
      .string()
      .default('')
      .refine((s) => normalizeBasePath(s) !== undefined, "must be a path such as /tools/herd (starting with '/', without '..' or '//')")
      .transform((s) => normalizeBasePath(s) ?? '')
      .describe(
        "the path prefix a reverse proxy mounts Herd under (--ui-base-path), used for the session cookie's Path; X-Forwarded-Prefix from a trusted proxy wins; '' for none",
      ),
    session_ttl_secs: z.number().int().min(60).max(2_592_000).default(28_800).describe('how long a console sign-in lasts, in seconds (the cookie Max-Age)'),
    sign_in_failures: z
      .strictObject({
        max: z.number().int().min(1).default(5).describe('failed console sign-ins one client address may make per window before it gets 429'),
        window_secs: z.number().int().min(1).default(300).describe('the window failed sign-ins are counted in, in seconds'),
      })
      .prefault({})
      .describe('throttling of failed console sign-ins, per client address (X-Forwarded-For only from server.trusted_proxies)'),
  })
  .prefault({})
  .describe('The web console (docs/console.md): sign-in with an admin or viewer key, sessions in the key store.');

export type UiConfig = z.infer<typeof uiConfigSchema>;
