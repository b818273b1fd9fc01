// A cheap summary of a model folder (names, sizes and mtimes two levels deep) so that poll mode
// reloads exactly the models whose files changed.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export function fingerprintModelFolder(modelPath: string): string {
  const parts: string[] = [];
  walk(modelPath, '', 0, parts);
  return parts.join('|');
}

function walk(dir: string, rel: string, depth: number, parts: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    parts.push(`${rel}:missing`);
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    try {
      const st = statSync(path);
      parts.push(`${rel}/${name}:${st.size}:${st.mtimeMs}`);
      if (st.isDirectory() && depth < 2) walk(path, `${rel}/${name}`, depth + 1, parts);
    } catch {
      parts.push(`${rel}/${name}:gone`);
    }
  }
}
