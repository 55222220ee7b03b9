/**
 * Hard-coded fixture ids (storyboard-schema.yaml > fixtures: "Hardcoded-literal
 * fixtures in sample_request (e.g., product_id: "test-product" without a
 * matching fixtures: entry) are permitted through 3.x for existing storyboards
 * that pre-seed matching IDs out of band").
 *
 * Many such storyboards discover the agent's own ids first (`context_outputs:
 * product_id ← products[0].product_id`) and then write a placeholder literal
 * where the narrative says "create a media buy using the discovered product".
 * No agent can know `test-product`; sending it grades the agent on the
 * storyboard's shortcut. So a literal value under one of the spec's fixture id
 * keys that no `fixtures:` entry declares is replaced by the value an earlier
 * step captured under the same name. It is one of the request enrichments
 * (enrich/index.ts): shown as a step warning, never applied to negative tests
 * (an unknown id may be exactly what they test), off with `requests: 'as-written'`.
 */
import type { Storyboard } from '../../model/storyboard.js';
import { pathJoin, type Enrichment } from './note.js';

/** The id keys of the spec's seedable fixtures. */
const FIXTURE_ID_KEYS = new Set(['product_id', 'pricing_option_id', 'creative_id', 'plan_id', 'media_buy_id']);

export interface CapturedValue {
  value: unknown;
  /** Step that captured it. */
  by: string;
}

export function declaredFixtureIds(storyboard: Storyboard): Set<string> {
  const ids = new Set<string>();
  for (const entries of Object.values(storyboard.fixtures ?? {})) {
    if (!Array.isArray(entries)) continue;
    for (const entry of entries) {
      if (!entry || typeof entry !== 'object') continue;
      for (const [key, value] of Object.entries(entry))
        if (FIXTURE_ID_KEYS.has(key) && typeof value === 'string') ids.add(value);
    }
  }
  return ids;
}

/** An authored literal id (not a placeholder) that no `fixtures:` entry seeds. */
export function isUnseededLiteral(value: unknown, declared: ReadonlySet<string>): value is string {
  return typeof value === 'string' && !value.startsWith('$') && !value.includes('{{') && !declared.has(value);
}

/**
 * Writes captured ids over the request's unseeded literal fixture ids, in
 * place. `written` is the step's sample_request as authored (to tell literals
 * from placeholders); `payload` the request after substitution (same shape).
 */
export function useCapturedFixtureIds(
  written: unknown,
  payload: unknown,
  declared: ReadonlySet<string>,
  captured: ReadonlyMap<string, CapturedValue>,
): Enrichment[] {
  const changes: Enrichment[] = [];
  const walk = (authored: unknown, sent: unknown, at: string, depth: number) => {
    if (depth > 32 || authored === null || typeof authored !== 'object' || sent === null || typeof sent !== 'object')
      return;
    for (const [key, value] of Object.entries(authored)) {
      const here = pathJoin(at, Array.isArray(authored) ? Number(key) : key);
      const capture = captured.get(key);
      if (
        FIXTURE_ID_KEYS.has(key) &&
        isUnseededLiteral(value, declared) &&
        capture &&
        typeof capture.value === 'string' &&
        capture.value !== value
      ) {
        (sent as Record<string, unknown>)[key] = capture.value;
        changes.push({
          path: here,
          value: capture.value,
          replaced: value,
          reason: `the storyboard hard-codes ${key} "${value}", which no fixtures: entry seeds; step "${capture.by}" captured the agent's own`,
        });
      } else {
        walk(value, (sent as Record<string, unknown>)[key], here, depth + 1);
      }
    }
  };
  walk(written, payload, '', 0);
  return changes;
}
