/**
 * The per-task request builder of the spec's runner model (storyboard-
 * schema.yaml > context_inputs: "inject captured context values into the
 * request at a specific path AFTER the per-task request builder runs"): what
 * stands between a step's `sample_request` and the wire.
 *
 * The rules, in order:
 * 1. `sample_request` is authoritative: a field the storyboard wrote is sent as
 *    written. The exceptions are named: a hard-coded id no fixture seeds
 *    (fixture-ids.ts) and a past flight (create-media-buy.ts).
 * 2. A negative test (`expect_error: true`) is sent as written: the missing or
 *    invalid field may be exactly what it tests.
 * 3. An enricher fills only what the request leaves out, from what the run
 *    discovered (the agent's own answers, the storyboard's earlier requests,
 *    its test kit).
 * 4. `context_inputs` is applied after all of this, by the run (run.ts).
 * Every change is returned as an Enrichment and becomes a step warning; with
 * `requests: 'as-written'` nothing is changed at all.
 *
 * Tasks with an enricher: ENRICHERS below. docs/conformance.md lists them
 * with the storyboard text that calls for each, and the reference runner's
 * enrichers we chose not to follow.
 */
import type { Step } from '../../model/storyboard.js';
import { enrichCreateMediaBuy, FALLBACK_BRAND_DOMAIN, type MediaBuyContext } from './create-media-buy.js';
import type { Discovery } from './discovery.js';
import { useCapturedFixtureIds, type CapturedValue } from './fixture-ids.js';
import { describeEnrichment, type Enrichment } from './note.js';

export { Discovery } from './discovery.js';
export { declaredFixtureIds, type CapturedValue } from './fixture-ids.js';

/** `enriched`: the per-task request builder runs (the spec's runner model); `as-written`: sample_request after substitution only. */
export type RequestMode = 'enriched' | 'as-written';

export interface EnrichInput {
  /** The task called (after test-kit resolution). */
  task: string;
  step: Step;
  /** The request after substitution; changed in place. */
  payload: Record<string, unknown>;
  discovery: Discovery;
  declared: ReadonlySet<string>;
  captured: ReadonlyMap<string, CapturedValue>;
  kitBrandDomain?: string;
  anchorMs: number;
  nowMs: number;
  /** The runner's own product discovery, when the run has none; returns why it did or did not find any. */
  discover: () => Promise<string | undefined>;
  /** The top-level fields the task's request schema (of the run's AdCP version) declares; absent: none known. */
  requestFields?: (task: string) => readonly string[];
}

type Enricher = (request: Record<string, unknown>, input: EnrichInput) => Promise<Enrichment[]>;

/** Tasks whose requests the corpus writes for a runner that completes them. */
const ENRICHERS: Readonly<Record<string, Enricher>> = {
  create_media_buy: (request, input) => {
    const ctx: MediaBuyContext = {
      discovery: input.discovery,
      declared: input.declared,
      anchorMs: input.anchorMs,
      nowMs: input.nowMs,
      discover: input.discover,
      ...(input.kitBrandDomain ? { kitBrandDomain: input.kitBrandDomain } : {}),
      ...(input.step.comply_scenario ? { scenario: input.step.comply_scenario } : {}),
    };
    return enrichCreateMediaBuy(request, input.step.sample_request, ctx);
  },
  comply_test_controller: async (request, input) => controllerAccount(request, input),
};

/**
 * comply_test_controller in AdCP 3.1 takes the caller's `account`, and "the runner MUST set sandbox: true on every
 * comply_test_controller request" (comply-test-controller-request.json > account): the account the storyboard sent
 * earlier in the run (its seeds carry the steps' identity, plan/seeding.ts), else the test kit's brand as a
 * natural-key account. A 3.0 controller request has no account field: nothing changes.
 */
function controllerAccount(request: Record<string, unknown>, input: EnrichInput): Enrichment[] {
  if (!input.requestFields?.('comply_test_controller').includes('account')) return [];
  const written = request.account;
  if (written && typeof written === 'object' && !Array.isArray(written)) {
    if ((written as { sandbox?: unknown }).sandbox === true) return [];
    request.account = { ...written, sandbox: true };
    return [
      {
        path: 'account.sandbox',
        value: true,
        reason: 'every comply_test_controller request must assert a sandbox account',
      },
    ];
  }
  const domain = input.kitBrandDomain ?? FALLBACK_BRAND_DOMAIN;
  const account = { ...(input.discovery.sentAccount ?? { brand: { domain }, operator: domain }), sandbox: true };
  request.account = account;
  return [
    {
      path: 'account',
      value: account,
      reason: `the controller request schema requires the caller's sandbox account and the storyboard authored none; ${input.discovery.sentAccount ? 'the account this storyboard sent earlier in the run' : `${input.kitBrandDomain ? "the test kit's brand" : "the corpus's fictional buyer"}, as a natural-key account`}`,
    },
  ];
}

/**
 * Completes `input.payload` in place as the per-task request builder would,
 * and returns one warning line per change.
 */
export async function enrichRequest(input: EnrichInput): Promise<string[]> {
  if (input.step.expect_error === true) return [];
  const changes = useCapturedFixtureIds(
    input.step.sample_request,
    input.payload,
    input.declared,
    input.captured,
    input.task,
  );
  const enricher = Object.hasOwn(ENRICHERS, input.task) ? ENRICHERS[input.task] : undefined;
  if (enricher) changes.push(...(await enricher(input.payload, input)));
  return changes.map(describeEnrichment);
}

/** The start of the UTC day after `nowMs`: where a moved or made-up flight starts. */
export function flightAnchor(nowMs: number): number {
  const day = 24 * 60 * 60 * 1000;
  return Math.floor(nowMs / day) * day + day;
}
