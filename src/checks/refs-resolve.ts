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

  const missing: Record<string, unknown>[] = [];
  const outOfScope: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  const seenOut = new Set<string>();
  for (const ref of sources.values) {
    const projected = project(ref, matchKeys);
    // Duplicates collapse on the compared form (URL keys normalised), so `…/mcp` and `…/mcp/` are one ref.
    const key = JSON.stringify(
      matchKeys.map((k) =>
        /url$/i.test(k) && typeof projected[k] === 'string' ? normaliseUrl(projected[k] as string) : projected[k],
      ),
    );
    if (scope?.key && !sameScope(ref, scope.key, scopeValue)) {
      if (!seenOut.has(key)) {
        seenOut.add(key);
        outOfScope.push(projected);
      }
      continue;
    }
    const resolved =
      hasAllKeys(ref, matchKeys) &&
      targets.values.some(
        (t) => hasAllKeys(t, matchKeys) && matchKeys.every((k) => sameKey(k, (ref as any)[k], (t as any)[k])),
      );
    if (!resolved && !seen.has(key)) {
      seen.add(key);
      missing.push(projected);
    }
  }
  // In-scope and out-of-scope refs are disjoint; `fail` promotes the latter to missing.
  if (onOutOfScope === 'fail') missing.push(...outOfScope);
  const truncated = sources.truncated || targets.truncated;
  const observations = [
    ...(onOutOfScope === 'warn' && outOfScope.length > 0
      ? [
          `${outOfScope.length} ref(s) outside scope ${scope?.key} = ${scopeValue ?? scope?.equals} were not checked: ${JSON.stringify(outOfScope.slice(0, 10))}`,
        ]
      : []),
    ...(truncated ? [`fan-out capped at ${MAX_WILDCARD_VALUES} values`] : []),
  ];
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
    keys.every((k) => (ref as any)[k] !== undefined && (ref as any)[k] !== null)
  );
}

function project(ref: unknown, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = ref !== null && typeof ref === 'object' ? ((ref as any)[k] ?? null) : null;
  return out;
}

/** Keys ending in `url` compare with trailing-slash and case normalisation on both sides (spec: scope.equals). */
function sameKey(key: string, a: unknown, b: unknown): boolean {
  if (/url$/i.test(key) && typeof a === 'string' && typeof b === 'string') return normaliseUrl(a) === normaliseUrl(b);
  return jsonEqual(a, b);
}

function sameScope(ref: unknown, key: string, equals: string | undefined): boolean {
  if (ref === null || typeof ref !== 'object' || equals === undefined) return false;
  return sameKey(key, (ref as any)[key], equals);
}

export function normaliseUrl(url: string): string {
  return url.trim().replace(/\/+$/, '').toLowerCase();
}
