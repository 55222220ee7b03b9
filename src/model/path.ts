/**
 * The storyboard "JSON path" dialect: dotted keys with `[n]` indexes and `[*]`
 * wildcards (`accounts[0].account_id`, `products[*].format_ids[*]`; `[]` is the same wildcard, as the 3.1 corpus
 * writes it in schema prose style: `allowed_actions[]`), and `length` on an array for its item count (`rights.length`,
 * storyboard-schema.yaml > Cross-step comparison), as used by
 * `validations[].path`, `context_outputs[].path` and `context_inputs[].inject_at`.
 * Results carry an RFC 6901 JSON Pointer, which is what the runner output
 * contract wants in `json_pointer`.
 */

export type PathSegment = string | number | '*';

/** Caps fan-out so a hostile response cannot make a wildcard walk explode (storyboard-schema.yaml > refs_resolve). */
export const MAX_WILDCARD_VALUES = 10_000;

export class PathSyntaxError extends Error {
  constructor(path: string, reason: string) {
    super(`invalid path "${path}": ${reason}. Paths look like "a.b[0].c" or "items[*].id".`);
    this.name = 'PathSyntaxError';
  }
}

const cache = new Map<string, PathSegment[]>();

export function parsePath(path: string): PathSegment[] {
  const cached = cache.get(path);
  if (cached) return cached;
  const segments: PathSegment[] = [];
  const re = /([^.[\]]+)|\[(\d+|\*|"[^"]*"|'[^']*'|)\]|(\.)/gy;
  let lastWasDot = true;
  let match: RegExpExecArray | null;
  let index = 0;
  // A leading "$." (JSONPath habit) is tolerated.
  const body = path.startsWith('$.') ? path.slice(2) : path === '$' ? '' : path;
  re.lastIndex = 0;
  while (index < body.length && (match = re.exec(body))) {
    index = re.lastIndex;
    if (match[3]) {
      if (lastWasDot) throw new PathSyntaxError(path, 'empty segment');
      lastWasDot = true;
      continue;
    }
    if (match[1] !== undefined) {
      segments.push(match[1]);
    } else {
      const inner = match[2]!;
      segments.push(inner === '*' || inner === '' ? '*' : /^\d+$/.test(inner) ? Number(inner) : inner.slice(1, -1));
    }
    lastWasDot = false;
  }
  if (index !== body.length) throw new PathSyntaxError(path, `unexpected character at ${index}`);
  cache.set(path, segments);
  return segments;
}

function escapePointerToken(token: string | number): string {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

export function toJsonPointer(segments: readonly (string | number)[]): string {
  return segments.length === 0 ? '' : '/' + segments.map(escapePointerToken).join('/');
}

interface ResolvedValue {
  value: unknown;
  pointer: string;
}

export interface PathResolution {
  /** True when the path (without wildcards) reached a value that is not `undefined`. */
  found: boolean;
  value: unknown;
  /** Pointer to the value, or to the deepest prefix that existed plus the missing segment. */
  pointer: string;
  /** For wildcard paths: every terminal value with its pointer. */
  matches?: ResolvedValue[];
}

function step(value: unknown, segment: string | number): unknown {
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    // `length` is the only key an array answers to: the item count the 3.1 corpus compares (`rights.length`).
    return typeof segment === 'number' ? value[segment] : segment === 'length' ? value.length : undefined;
  }
  if (!Object.prototype.hasOwnProperty.call(value, segment)) return undefined;
  return (value as Record<string, unknown>)[String(segment)];
}

/** Resolves a storyboard path against a JSON value. */
export function resolvePath(root: unknown, path: string): PathResolution {
  const segments = parsePath(path);
  if (segments.includes('*')) return resolveWildcard(root, segments);
  let current: unknown = root;
  const walked: (string | number)[] = [];
  for (const segment of segments as (string | number)[]) {
    walked.push(segment);
    current = step(current, segment);
    if (current === undefined) return { found: false, value: undefined, pointer: toJsonPointer(walked) };
  }
  return { found: true, value: current, pointer: toJsonPointer(walked) };
}

function resolveWildcard(root: unknown, segments: PathSegment[]): PathResolution {
  let frontier: { value: unknown; at: (string | number)[] }[] = [{ value: root, at: [] }];
  for (const segment of segments) {
    const next: typeof frontier = [];
    for (const { value, at } of frontier) {
      if (segment === '*') {
        if (!Array.isArray(value)) continue;
        value.forEach((item, i) => next.push({ value: item, at: [...at, i] }));
      } else {
        const child = step(value, segment);
        if (child !== undefined) next.push({ value: child, at: [...at, segment] });
      }
      if (next.length > MAX_WILDCARD_VALUES) break;
    }
    frontier = next.slice(0, MAX_WILDCARD_VALUES);
  }
  const matches = frontier.map(({ value, at }) => ({ value, pointer: toJsonPointer(at) }));
  const firstConcrete = segments.indexOf('*');
  return {
    found: matches.length > 0,
    value: matches.map((m) => m.value),
    pointer: toJsonPointer(segments.slice(0, firstConcrete) as (string | number)[]),
    matches,
  };
}

/**
 * Segments a write must never walk through: they reach an object's prototype,
 * so a storyboard's `inject_at: "__proto__.x"` would change every object of
 * the worker (and every later test in it).
 */
export const PROTOTYPE_SEGMENTS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Writes `value` at `path` (no wildcards), creating objects/arrays on the way. Used by `context_inputs`. */
export function setPath(root: Record<string, unknown>, path: string, value: unknown): void {
  const segments = parsePath(path);
  if (segments.includes('*')) throw new PathSyntaxError(path, 'wildcards cannot be written to');
  const unsafe = segments.find((s) => typeof s === 'string' && PROTOTYPE_SEGMENTS.has(s));
  if (unsafe !== undefined)
    throw new PathSyntaxError(path, `"${String(unsafe)}" cannot be written to (it reaches the object's prototype)`);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- walks JSON of any shape; every step is checked above (no prototype segment)
  let current: any = root;
  segments.forEach((segment, i) => {
    if (i === segments.length - 1) {
      current[segment as string | number] = value;
      return;
    }
    const nextIsIndex = typeof segments[i + 1] === 'number';
    const existing = current[segment as string | number];
    // Only own containers are walked into; anything else (absent, null, a scalar) is replaced.
    if (existing === null || typeof existing !== 'object' || !Object.prototype.hasOwnProperty.call(current, segment)) {
      current[segment as string | number] = nextIsIndex ? [] : {};
    }
    current = current[segment as string | number];
  });
}

/**
 * `target[key] = value` as an own property even for the key `__proto__`: JSON.parse makes an agent's `"__proto__"`
 * key plain data, and a copy made by assignment would turn it into the copy's prototype instead — dropping it from
 * every record and report without a trace.
 */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** A JSON object (not null, not an array): the only value a path segment can step into by key. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
