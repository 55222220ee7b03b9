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
 *
 * Only a reference is replaced: an id the step is creating is never. A literal
 * there is the storyboard naming the new thing, not a shortcut for the agent's
 * id — replacing it turns "create a new one" into "write over an old one"
 * (deterministic-testing.yaml > sync_fresh_creative_for_rejection syncs
 * `deterministic-rejection-probe` precisely because the creative captured
 * before it is archived). See `createdIdKey` for what counts as creating.
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
 * The id key that names what an object of a request creates, if the request writes it (`collection`: the key of the
 * array the object is an item of; `atRoot`: the object is the request itself):
 *   - an item of a `<things>` array names itself with `<thing>_id`: sync_creatives' `creatives[].creative_id`,
 *     sync_plans' `plans[].plan_id`, the inline uploads of create_/update_media_buy's `packages[].creatives[]`, the
 *     products a controller's `force_task_completion` result defines (`products[].product_id`,
 *     `pricing_options[].pricing_option_id`). A reference is spelt otherwise — `creative_ids: [...]` filters,
 *     `creative_assignments[].creative_id`, `assignments[].creative_id`, `refine[].product_id` — and stays replaceable;
 *   - the request of `create_<thing>` names the thing it creates with a top-level `<thing>_id` (create_media_buy's
 *     `media_buy_id`, available_actions.yaml); update_media_buy's `media_buy_id` names the buy it changes: a reference.
 */
function createdIdKey(collection: string | undefined, task: string | undefined, atRoot: boolean): string | undefined {
  if (collection !== undefined) return collection.endsWith('s') ? `${collection.slice(0, -1)}_id` : undefined;
  const created = atRoot && task ? /^create_(\w+)$/.exec(task)?.[1] : undefined;
  return created === undefined ? undefined : `${created}_id`;
}

/**
 * Writes captured ids over the request's unseeded literal fixture ids, in
 * place — never over an id the step is creating (`createdIdKey`). `written` is
 * the step's sample_request as authored (to tell literals from placeholders);
 * `payload` the request after substitution (same shape); `task` the task called
 * (absent: no `create_<thing>` top-level id is known).
 */
export function useCapturedFixtureIds(
  written: unknown,
  payload: unknown,
  declared: ReadonlySet<string>,
  captured: ReadonlyMap<string, CapturedValue>,
  task?: string,
): Enrichment[] {
  const changes: Enrichment[] = [];
  /** `collection`: the key of the array `authored` is (or is an item of). */
  const walk = (authored: unknown, sent: unknown, at: string, depth: number, collection?: string) => {
    if (depth > 32 || authored === null || typeof authored !== 'object' || sent === null || typeof sent !== 'object')
      return;
    const created = Array.isArray(authored) ? undefined : createdIdKey(collection, task, depth === 0);
    for (const [key, value] of Object.entries(authored)) {
      const here = pathJoin(at, Array.isArray(authored) ? Number(key) : key);
      const capture = captured.get(key);
      if (
        FIXTURE_ID_KEYS.has(key) &&
        key !== created &&
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
        // An array under `key` is the collection `key`, and its items are items of it.
        const next = Array.isArray(authored) ? collection : Array.isArray(value) ? key : undefined;
        walk(value, (sent as Record<string, unknown>)[key], here, depth + 1, next);
      }
    }
  };
  walk(written, payload, '', 0);
  return changes;
}
