/**
 * How long each step of a storyboard may share the agent (src/plan/agent-windows.ts): a one-shot arm from its directive
 * to the operation it is for, an upstream_traffic check over its window, the seeding phase beside other seeding phases,
 * a session-long scenario or a storyboard's own seeds for the whole run; every other step shared, for itself.
 */
import { describe, expect, it } from 'vitest';
import { resolveCorpus } from '../../src/corpus.js';
import type { Step } from '../../src/model/storyboard.js';
import { controller, planned } from '../helpers/planned.js';
import { agentTurns } from '../../src/plan/agent-windows.js';
import { SEEDING_PHASE_ID } from '../../src/plan/seeding.js';
import { openStoryboardRun } from '../../src/open-run.js';
import { loadStoryboardFile } from '../../src/storyboard/load.js';

const call = (id: string, task: string, validations: unknown[] = []): Partial<Step> => ({
  id,
  task,
  validations: validations as never,
});
const shared = (until: number) => ({ mode: 'shared', until });
const alone = (until: number) => ({ mode: 'alone', until });

describe('agentTurns', () => {
  it.each([
    ['force_create_media_buy_arm', 'create_media_buy'],
    ['force_get_products_arm', 'get_products'],
    ['force_get_signals_arm', 'get_signals'],
  ])('%s: alone from the directive through the next %s', (scenario, operation) => {
    const steps = planned(
      ['p', call('before', operation)],
      ['p', controller('arm', scenario)],
      ['p', call('other', 'list_creative_formats')],
      ['q', call('consume', operation)],
      ['q', call('after', operation)],
    );
    expect(agentTurns(steps)).toEqual([shared(0), alone(3), alone(3), alone(3), shared(4)]);
  });

  it('an arm no later step consumes: alone to the end', () => {
    const steps = planned(
      ['p', call('a', 'create_media_buy')],
      ['p', controller('arm', 'force_create_media_buy_arm')],
      ['p', call('b', 'get_products')],
    );
    expect(agentTurns(steps)).toEqual([shared(0), alone(2), alone(2)]);
  });

  it("an upstream_traffic check: alone from its `since:` step through it, or over its own step; among a step's other checks", () => {
    const steps = planned(
      ['p', call('search', 'get_signals')],
      ['p', call('unrelated', 'get_signals')],
      [
        'p',
        call('activate', 'activate_signal', [
          { check: 'response_schema' },
          { check: 'upstream_traffic', since: 'search' },
        ]),
      ],
      ['p', call('between', 'get_signals')],
      ['p', call('sync', 'sync_audiences', [{ check: 'upstream_traffic' }])],
      ['p', call('unknown_since', 'sync_audiences', [{ check: 'upstream_traffic', since: 'later' }])],
      ['p', call('later', 'get_signals')],
    );
    expect(agentTurns(steps)).toEqual([alone(2), alone(2), alone(2), shared(3), alone(4), alone(5), shared(6)]);
  });

  it('overlapping windows are one, held to the end of the last', () => {
    const steps = planned(
      ['p', controller('arm', 'force_create_media_buy_arm')],
      ['p', call('search', 'get_products')],
      ['p', call('buy', 'create_media_buy', [{ check: 'upstream_traffic', since: 'search' }])],
      ['p', call('report', 'get_media_buy_delivery', [{ check: 'upstream_traffic', since: 'buy' }])],
      ['p', call('after', 'get_products')],
    );
    expect(agentTurns(steps)).toEqual([alone(3), alone(3), alone(3), alone(3), shared(4)]);
  });

  it('a window that starts before an earlier-planned one takes it in (windows merged by where they start)', () => {
    const steps = planned(
      ['p', call('search', 'get_products')],
      ['p', controller('arm', 'force_create_media_buy_arm')],
      ['p', call('buy', 'create_media_buy', [{ check: 'upstream_traffic', since: 'search' }])],
      ['p', call('after', 'get_products')],
    );
    expect(agentTurns(steps)).toEqual([alone(2), alone(2), alone(2), shared(3)]);
  });

  it('windows apart stay apart', () => {
    const steps = planned(
      ['p', call('one', 'sync_audiences', [{ check: 'upstream_traffic' }])],
      ['p', call('between', 'get_products')],
      ['p', call('two', 'sync_audiences', [{ check: 'upstream_traffic' }])],
    );
    expect(agentTurns(steps)).toEqual([alone(0), shared(1), alone(2)]);
  });

  it("the injected seeding phase: beside other seeding windows, through its last seed; its seed scenarios don't make the run alone", () => {
    const steps = planned(
      [SEEDING_PHASE_ID, controller('seed_product_p1', 'seed_product')],
      [SEEDING_PHASE_ID, controller('seed_pricing_option_p1', 'seed_pricing_option')],
      ['p', call('list', 'get_products')],
    );
    expect(agentTurns(steps)).toEqual([{ mode: 'seed', until: 1 }, { mode: 'seed', until: 1 }, shared(2)]);
  });

  it.each(['force_upstream_unavailable', 'query_upstream_traffic', 'seed_account'])(
    'a step of its own asking for %s: alone for the whole run, seeding phase included',
    (scenario) => {
      const steps = planned(
        [SEEDING_PHASE_ID, controller('seed_product_p1', 'seed_product')],
        ['p', call('list', 'get_products')],
        ['p', controller('s', scenario)],
        ['p', call('after', 'get_products')],
      );
      expect(agentTurns(steps)).toEqual([alone(3), alone(3), alone(3), alone(3)]);
    },
  );

  it('shares every other step, for itself: entity transitions, scenario names matched whole, other tasks', () => {
    const steps = planned(
      ['p', controller('status', 'force_media_buy_status')],
      [
        'p',
        { id: 'buy', task: 'create_media_buy', sample_request: { scenario: 'force_create_media_buy_arm' } as never },
      ],
      ['p', controller('prefixed', 'list_seed_product')],
      ['p', controller('suffixed', 'force_get_products_arm-v2')],
      ['p', controller('seed_suffixed', 'seed_product2')],
      ['p', controller('unavailable_suffixed', 'force_upstream_unavailable2')],
      ['p', controller('inherited', 'toString')],
      ['p', controller('not_text', 7)],
      ['p', { id: 'none', task: 'comply_test_controller' }],
      ['p', call('caps', 'get_adcp_capabilities', [{ check: 'field_present' }])],
    );
    expect(agentTurns(steps)).toEqual(steps.map((_, i) => shared(i)));
  });

  it('on the 3.0.6 corpus: create_media_buy_async alone from its arm through its buy, shared before; a seeding storyboard seeds beside others', () => {
    const corpus = resolveCorpus(undefined);
    const turnsOf = (path: string) => {
      const loaded = loadStoryboardFile(`${corpus.root}/${path}`, { corpusRoot: corpus.root });
      if (!loaded.ok) throw new Error(`${path} does not load`);
      const run = openStoryboardRun(loaded.storyboard, { agentUrl: 'http://127.0.0.1:9/mcp' }, { env: {} });
      const steps = run.planned();
      const turns = agentTurns(steps);
      return steps.map((s, i) => `${s.step.task} ${turns[i]!.mode}`);
    };
    const arm = turnsOf('protocols/media-buy/scenarios/create_media_buy_async.yaml');
    const from = arm.indexOf('comply_test_controller alone');
    expect(from).toBeGreaterThan(0);
    expect(arm.slice(0, from).every((t) => !t.endsWith('alone'))).toBe(true);
    // Its buy is its last step: the window ends there.
    expect(arm.slice(from)).toEqual(['comply_test_controller alone', 'create_media_buy alone']);
    const seeding = turnsOf('protocols/governance/index.yaml');
    expect(seeding[0]).toMatch(/ seed$/);
    expect(seeding.filter((t) => t.endsWith(' alone'))).toEqual([]);
  });
});
