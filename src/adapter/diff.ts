/**
 * The expected/actual diff under a failed step's details, the same text under every test framework: Vitest's own
 * differ (`@vitest/utils/diff`) is not installed in a Jest-only project and Jest's (`jest-diff`) prints objects
 * differently, so a report read under one framework would not match the other's. The layout is the one both print
 * (`- Expected`, `+ Received`, then the lines of both values, `-`/`+`/two spaces), without colours.
 */

/** Beyond this many line pairs the diff is not worth its cost: both values are printed whole instead. */
const MAX_CELLS = 1_000_000;

/** The diff of two values, or undefined when they print the same. */
export function stepDiff(expected: unknown, actual: unknown): string | undefined {
  const want = lines(expected);
  const got = lines(actual);
  if (want.join('\n') === got.join('\n')) return undefined;
  return ['- Expected', '+ Received', '', ...diffLines(want, got)].join('\n');
}

/** A value's lines: text as it is (multi-line text diffs best line by line), anything else as indented JSON. */
function lines(value: unknown): string[] {
  if (typeof value === 'string' && value.includes('\n')) return value.split('\n');
  return serialise(value, '').split('\n');
}

/** JSON with sorted keys and a comma after every member, so a member's line does not change when one is added after it. */
function serialise(value: unknown, indent: string, depth = 0): string {
  if (value === undefined) return 'undefined';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? String(value);
  if (depth > 32) return Array.isArray(value) ? '[…]' : '{…}';
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => `${inner}${serialise(v, inner, depth + 1)},`).join('\n')}\n${indent}]`;
  }
  const keys = Object.keys(value).sort();
  if (keys.length === 0) return '{}';
  const members = keys.map(
    (k) => `${inner}${JSON.stringify(k)}: ${serialise((value as Record<string, unknown>)[k], inner, depth + 1)},`,
  );
  return `{\n${members.join('\n')}\n${indent}}`;
}

/** A line diff (longest common subsequence): `- ` expected only, `+ ` received only, two spaces for both. */
function diffLines(a: string[], b: string[]): string[] {
  if (a.length * b.length > MAX_CELLS) return [...a.map((l) => `- ${l}`), ...b.map((l) => `+ ${l}`)];
  // common[i][j]: the longest common subsequence of a[i..] and b[j..].
  const common = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      common[i]![j] = a[i] === b[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`  ${a[i++]}`);
      j++;
    } else if (j >= b.length || (i < a.length && common[i + 1]![j]! >= common[i]![j + 1]!)) out.push(`- ${a[i++]}`);
    else out.push(`+ ${b[j++]}`);
  }
  return out;
}
