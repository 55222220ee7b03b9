import { isDeepStrictEqual } from 'node:util';

/** Storyboard values compare as JSON: deep, type-strict (1 ≠ "1"). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return isDeepStrictEqual(a, b);
}

export function oneOf(actual: unknown, allowed: readonly unknown[]): boolean {
  return allowed.some((candidate) => jsonEqual(actual, candidate));
}
