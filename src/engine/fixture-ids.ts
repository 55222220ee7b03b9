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
 * storyboard's shortcut. So, on a step that does not expect an error, a literal
 * value under one of the spec's fixture id keys that no `fixtures:` entry
 * declares is replaced by the value an earlier step captured under the same
 * name — and the step carries a warning saying so, so the substitution is
 * never silent. Negative tests (`expect_error`) keep their literals: an unknown
 * id may be exactly what they test.
 */
import type { Step, Storyboard } from '../storyboard/types.js';

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
      for (const [key, value] of Object.entries(entry)) if (FIXTURE_ID_KEYS.has(key) && typeof value === 'string') ids.add(value);
    }
  }
  return ids;
}

/**
 * Writes captured ids over the request's unseeded literal fixture ids, in
 * place. `written` is the step's sample_request as authored (to tell literals
 * from placeholders); `payload` the request after substitution (same shape).
 */
export function useCapturedFixtureIds(
  written: unknown,
  payload: unknown,
  step: Step,
  declared: ReadonlySet<string>,
  captured: ReadonlyMap<string, CapturedValue>,
): string[] {
  if (step.expect_error === true) return [];
  const notes: string[] = [];
  const walk = (authored: unknown, sent: unknown, at: string, depth: number) => {
    if (depth > 32 || authored === null || typeof authored !== 'object' || sent === null || typeof sent !== 'object') return;
    for (const [key, value] of Object.entries(authored)) {
      const here = `${at}/${key}`;
      const capture = captured.get(key);
      if (
        FIXTURE_ID_KEYS.has(key) &&
        typeof value === 'string' &&
        !value.startsWith('$') &&
        !value.includes('{{') &&
        !declared.has(value) &&
        capture &&
        typeof capture.value === 'string' &&
        capture.value !== value
      ) {
        (sent as Record<string, unknown>)[key] = capture.value;
        notes.push(`${here}: sample_request hard-codes ${key} "${value}", which no fixtures: entry seeds; sent ${JSON.stringify(capture.value)}, captured by step "${capture.by}"`);
      } else {
        walk(value, (sent as Record<string, unknown>)[key], here, depth + 1);
      }
    }
  };
  walk(written, payload, '', 0);
  return notes;
}
