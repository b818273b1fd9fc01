// Herd's own version, read once from its package.json (the same relative path from src/ and from dist/).
import { readFileSync } from 'node:fs';

export const HERD_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
