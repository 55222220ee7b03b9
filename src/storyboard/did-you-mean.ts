/** "Did you mean …?" for misspelled keys and check names. */

/** Edit distance (insert / delete / substitute), one row at a time. */
function levenshtein(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** `Sample-Request`, `sampleRequest` and `sample_request` are the same key to a human. */
function canonical(name: string): string {
  return name.toLowerCase().replace(/[-_\s]/g, '');
}

/**
 * The known name `word` is most likely a misspelling of, or undefined.
 * A candidate must differ only by case/`_`/`-`, or be within `maxDistance`
 * edits — and fewer edits than `word` has characters, so that a two-letter
 * key is not "corrected" into an unrelated two-letter key.
 */
export function closestMatch(word: string, known: Iterable<string>, maxDistance = 2): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    if (candidate === word) return undefined;
    const distance = canonical(candidate) === canonical(word) ? 0 : levenshtein(word, candidate);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= maxDistance && bestDistance < word.length ? best : undefined;
}
