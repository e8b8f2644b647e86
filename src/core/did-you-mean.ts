/** "Did you mean": the name a misspelled one was most likely meant to be. */

/** Edit distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      const cost = a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + cost);
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The candidate `key` was most likely meant to be, if one is close enough. */
export function closest(key: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const field of candidates) {
    const d = distance(key, field);
    if (d < bestDistance) [best, bestDistance] = [field, d];
  }
  const allowed = Math.max(1, Math.min(3, Math.floor(key.length / 3)));
  return bestDistance <= allowed ? best : undefined;
}
