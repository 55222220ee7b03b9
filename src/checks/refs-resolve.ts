import { MAX_WILDCARD_VALUES, parsePath, resolvePath } from '../model/path.js';
import { jsonEqual } from './equality.js';
import type { Check, CheckInput } from './types.js';

/**
 * `refs_resolve` (storyboard-schema.yaml > "Cross-step integrity"): every ref
 * in a source set resolves to a member of a target set, matched on
 * `match_keys`. A ref lacking any match key never matches. Refs outside
 * `scope` are graded by `on_out_of_scope` (warn: pass with observations;
 * ignore; fail: counted as missing). `actual.missing` lists the unresolved
 * refs projected to the match keys, duplicates collapsed.
 */
export const refsResolve: Check = (input) => {
  const { validation } = input;
  const source = validation.source as { from?: string; path?: string } | undefined;
  const target = validation.target as { from?: string; path?: string } | undefined;
  const matchKeys = Array.isArray(validation.match_keys) ? validation.match_keys.map(String) : [];
  if (!source?.path || !target?.path || matchKeys.length === 0) {
    return {
      passed: false,
      json_pointer: null,
      expected: 'source.path, target.path and match_keys',
      actual: null,
      error: 'refs_resolve needs source: { from, path }, target: { from, path } and a non-empty match_keys list',
    };
  }
  const sources = collect(input, source.from, source.path);
  const targets = collect(input, target.from, target.path);
  const scope = validation.scope as { key?: string; equals?: string } | undefined;
  const onOutOfScope = String(validation.on_out_of_scope ?? 'warn');
  const scopeValue = scope?.equals === '$agent_url' ? input.agentUrl : scope?.equals;

  const { missing, outOfScope } = unresolvedRefs(
    sources.values,
    matchKeys,
    (ref) => !scope?.key || sameScope(ref, scope.key, scopeValue),
    (ref) => resolvesIn(ref, targets.values, matchKeys),
  );
  // In-scope and out-of-scope refs are disjoint; `fail` promotes the latter to missing.
  if (onOutOfScope === 'fail') missing.push(...outOfScope);
  const truncated = sources.truncated || targets.truncated;
  const observations = observationsOf(outOfScope, onOutOfScope === 'warn', scope, scopeValue, truncated);
  if (missing.length === 0) {
    return { passed: true, json_pointer: sources.pointer, ...(observations.length ? { observations } : {}) };
  }
  return {
    passed: false,
    json_pointer: sources.pointer,
    expected: { every_ref_in: target.path, match_keys: matchKeys },
    actual: { missing, ...(observations.length ? { observations } : {}) },
    error: `${missing.length} ref(s) from ${source.path} do not resolve to ${target.path} on [${matchKeys.join(', ')}]`,
  };
};

/**
 * The refs that do not resolve and the refs out of scope, each projected to the match keys; duplicates collapse on the
 * compared form (URL keys normalised), so `…/mcp` and `…/mcp/` are one ref.
 */
function unresolvedRefs(
  refs: unknown[],
  matchKeys: string[],
  inScope: (ref: unknown) => boolean,
  resolves: (ref: unknown) => boolean,
): { missing: Record<string, unknown>[]; outOfScope: Record<string, unknown>[] } {
  const missing: Record<string, unknown>[] = [];
  const outOfScope: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  const seenOut = new Set<string>();
  for (const ref of refs) {
    const projected = project(ref, matchKeys);
    const key = JSON.stringify(
      matchKeys.map((k) =>
        /url$/i.test(k) && typeof projected[k] === 'string' ? normaliseUrl(projected[k] as string) : projected[k],
      ),
    );
    if (!inScope(ref)) {
      if (!seenOut.has(key)) {
        seenOut.add(key);
        outOfScope.push(projected);
      }
      continue;
    }
    if (!resolves(ref) && !seen.has(key)) {
      seen.add(key);
      missing.push(projected);
    }
  }
  return { missing, outOfScope };
}

/** The refs out of scope, when `on_out_of_scope` is warn, and a capped fan-out. */
function observationsOf(
  outOfScope: Record<string, unknown>[],
  warn: boolean,
  scope: { key?: string; equals?: string } | undefined,
  scopeValue: string | undefined,
  truncated: boolean,
): string[] {
  return [
    ...(warn && outOfScope.length > 0
      ? [
          `${outOfScope.length} ref(s) outside scope ${scope?.key} = ${scopeValue ?? scope?.equals} were not checked: ${JSON.stringify(outOfScope.slice(0, 10))}`,
        ]
      : []),
    ...(truncated ? [`fan-out capped at ${MAX_WILDCARD_VALUES} values`] : []),
  ];
}

/** A ref with every match key resolves to a target with every match key, equal on each. */
function resolvesIn(ref: unknown, targets: unknown[], matchKeys: string[]): boolean {
  return (
    hasAllKeys(ref, matchKeys) &&
    targets.some(
      (t) =>
        hasAllKeys(t, matchKeys) &&
        matchKeys.every((k) => sameKey(k, (ref as Record<string, unknown>)[k], (t as Record<string, unknown>)[k])),
    )
  );
}

function collect(
  input: CheckInput,
  from: string | undefined,
  path: string,
): { values: unknown[]; pointer: string; truncated: boolean } {
  let root: unknown;
  let rest = path;
  if (from === 'context') {
    // The first segment names the captured context value; the rest walks into it.
    const [name] = parsePath(path);
    root = { [String(name)]: input.context?.get(String(name)) };
  } else {
    root = input.exchange.data;
    rest = path;
  }
  const found = resolvePath(root, rest);
  if (!found.found) return { values: [], pointer: found.pointer, truncated: false };
  const values = found.matches ? found.matches.map((m) => m.value) : [found.value];
  return { values: values.flat(), pointer: found.pointer, truncated: values.length >= MAX_WILDCARD_VALUES };
}

function hasAllKeys(ref: unknown, keys: string[]): boolean {
  return (
    ref !== null &&
    typeof ref === 'object' &&
    keys.every((k) => (ref as Record<string, unknown>)[k] !== undefined && (ref as Record<string, unknown>)[k] !== null)
  );
}

function project(ref: unknown, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys)
    out[k] = ref !== null && typeof ref === 'object' ? ((ref as Record<string, unknown>)[k] ?? null) : null;
  return out;
}

/** Keys ending in `url` compare with trailing-slash and case normalisation on both sides (spec: scope.equals). */
function sameKey(key: string, a: unknown, b: unknown): boolean {
  if (/url$/i.test(key) && typeof a === 'string' && typeof b === 'string') return normaliseUrl(a) === normaliseUrl(b);
  return jsonEqual(a, b);
}

function sameScope(ref: unknown, key: string, equals: string | undefined): boolean {
  if (ref === null || typeof ref !== 'object' || equals === undefined) return false;
  return sameKey(key, (ref as Record<string, unknown>)[key], equals);
}

function normaliseUrl(url: string): string {
  return url.trim().replace(/\/+$/, '').toLowerCase();
}
