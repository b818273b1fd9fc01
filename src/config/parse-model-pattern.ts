// Model-id globs for pattern routes and pattern prices: `*` (any run, empty included) and `?` (one
// character), anchored at both ends, case-sensitive; every other character stands for itself.

export interface ModelPattern {
  /** The glob as written in herd.yaml. */
  glob: string;
  /** Whether the whole of `id` matches. */
  test(id: string): boolean;
}

/** A glob holding `*` or `?`; one without them is an exact name (models and aliases say those). */
export function isModelGlob(text: string): boolean {
  return text.includes('*') || text.includes('?');
}

export function parseModelPattern(glob: string): ModelPattern {
  const pattern = [...glob];
  return { glob, test: (id) => matchGlob(pattern, [...id]) };
}

/**
 * Greedy wildcard matching with one backtrack point (the last `*`), bounded by pattern × id steps: a
 * regex would backtrack catastrophically on globs such as `*-*-*-*` against a long id a client chose.
 */
function matchGlob(pattern: readonly string[], id: readonly string[]): boolean {
  let p = 0;
  let i = 0;
  let star = -1;
  let resume = 0;
  while (i < id.length) {
    const c = pattern[p];
    if (c === '*') {
      star = p++;
      resume = i;
    } else if (c !== undefined && (c === '?' || c === id[i])) {
      p++;
      i++;
    } else if (star >= 0) {
      p = star + 1;
      i = ++resume;
    } else return false;
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/**
 * Whether every id `later` matches is also matched by `earlier`, so that `later`, listed after it, can
 * never match. Sound rather than complete: a `true` is always right; a rare covered glob may slip by.
 */
export function coversPattern(earlier: string, later: string): boolean {
  const a = [...earlier];
  const b = [...later];
  // covered[i][j]: a[i..] matches every string b[j..] stands for.
  const covered: boolean[][] = Array.from({ length: a.length + 1 }, () => new Array<boolean>(b.length + 1).fill(false));
  covered[a.length]![b.length] = true;
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length; j >= 0; j--) {
      const x = a[i]!;
      const y = b[j];
      if (x === '*') {
        // `*` takes nothing, or one more token of `later` (whatever that token stands for).
        covered[i]![j] = covered[i + 1]![j]! || (y !== undefined && covered[i]![j + 1]!);
      } else if (y === undefined || y === '*') {
        covered[i]![j] = false;
      } else if (x === '?') {
        covered[i]![j] = covered[i + 1]![j + 1]!;
      } else {
        covered[i]![j] = x === y && covered[i + 1]![j + 1]!;
      }
    }
  }
  return covered[0]![0]!;
}
