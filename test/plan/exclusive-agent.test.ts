/**
 * Which storyboards need the agent to themselves (src/plan/exclusive-agent.ts): a per-caller controller scenario or an
 * upstream_traffic check; every other storyboard shares it.
 */
import { describe, expect, it } from 'vitest';
import { resolveCorpus } from '../../src/corpus.js';
import type { Storyboard } from '../../src/model/storyboard.js';
import { exclusiveAgentReason } from '../../src/plan/exclusive-agent.js';
import { loadStoryboardFile } from '../../src/storyboard/load.js';

/** A storyboard of one phase with these steps (the fields the rule reads). */
const withSteps = (steps: Partial<Storyboard['phases'][number]['steps'][number]>[]) =>
  ({ id: 'sb', phases: [{ id: 'p', steps }] }) as unknown as Storyboard;

const corpus = resolveCorpus(undefined);
const corpusStoryboard = (path: string) => {
  const loaded = loadStoryboardFile(`${corpus.root}/${path}`, { corpusRoot: corpus.root });
  if (!loaded.ok) throw new Error(`${path} does not load`);
  return loaded.storyboard;
};

describe('exclusiveAgentReason', () => {
  it.each([
    'force_create_media_buy_arm',
    'force_get_products_arm',
    'force_get_signals_arm',
    'force_upstream_unavailable',
  ])('a comply_test_controller step asking for %s', (scenario) => {
    const storyboard = withSteps([{ id: 'arm', task: 'comply_test_controller', sample_request: { scenario } }]);
    expect(exclusiveAgentReason(storyboard)).toBe(`step arm asks the controller for ${scenario}, which is per caller`);
  });

  it("an upstream_traffic check, among the step's others", () => {
    const storyboard = withSteps([
      {
        id: 'buy',
        task: 'create_media_buy',
        validations: [{ check: 'response_schema' } as never, { check: 'upstream_traffic' } as never],
      },
    ]);
    expect(exclusiveAgentReason(storyboard)).toBe(
      "step buy checks upstream_traffic, the caller's traffic in a time window",
    );
  });

  it("a seed step of its own (the injected seeding phase is the run host's to handle)", () => {
    const storyboard = withSteps([
      { id: 'seed', task: 'comply_test_controller', sample_request: { scenario: 'seed_product' } },
    ]);
    expect(exclusiveAgentReason(storyboard)).toBe(
      'step seed asks the controller for seed_product, which is per caller',
    );
  });

  it('not entity-scoped transitions or other tasks', () => {
    const storyboard = withSteps([
      { id: 'status', task: 'comply_test_controller', sample_request: { scenario: 'force_media_buy_status' } },
      { id: 'buy', task: 'create_media_buy', sample_request: { scenario: 'force_create_media_buy_arm' } },
      // A scenario name is matched whole.
      { id: 'prefixed', task: 'comply_test_controller', sample_request: { scenario: 'list_seed_product' } },
      { id: 'suffixed', task: 'comply_test_controller', sample_request: { scenario: 'force_get_products_arm-v2' } },
      { id: 'none', task: 'comply_test_controller', sample_request: {} },
      { id: 'caps', task: 'get_adcp_capabilities', validations: [{ check: 'field_present' } as never] },
    ]);
    expect(exclusiveAgentReason(storyboard)).toBeUndefined();
  });

  it('in the 3.0.6 corpus: create_media_buy_async (its submitted arm), not capability_discovery or a seeding storyboard', () => {
    expect(exclusiveAgentReason(corpusStoryboard('protocols/media-buy/scenarios/create_media_buy_async.yaml'))).toMatch(
      /force_create_media_buy_arm/,
    );
    expect(exclusiveAgentReason(corpusStoryboard('universal/capability-discovery.yaml'))).toBeUndefined();
    // Seeds through prerequisites.controller_seeding: the injected phase, not a step of its own.
    expect(exclusiveAgentReason(corpusStoryboard('protocols/governance/index.yaml'))).toBeUndefined();
  });
});
