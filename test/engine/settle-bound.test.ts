/**
 * The bound of a settle without a run (open-run.ts `settleBoundOf`, engine/settle-bound.ts): what a worker whose steps
 * the run host runs gives its step tests as their timeout (adapter/hosted-run.ts). It must be the bound an opened run
 * computes, to the millisecond, for every storyboard and every setting a role's bound reads — else a step test times
 * out before the host's run ends, or a hung host holds the run longer than the engine allows.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RuntimeConfig } from '../../src/config.js';
import { resolveCorpus } from '../../src/corpus.js';
import type { Storyboard } from '../../src/model/storyboard.js';
import { planOf } from '../../src/adapter/planned-steps.js';
import { openStoryboardRun, settleBoundOf } from '../../src/open-run.js';
import { listCorpus } from '../../src/storyboard/select.js';
import type { RunnerRole } from '../../src/engine/role.js';
import { BUILTIN_ROLES } from '../../src/roles/index.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import { rateLimitBoundMs } from '../../src/transport/rate-limit.js';

const corpus = resolveCorpus(undefined);
const fixtures = join(import.meta.dirname, '..', '..', 'fixtures', 'storyboards');

function load(file: string): Storyboard {
  const loaded = loadStoryboard(readFileSync(file, 'utf8'), file);
  if (!loaded.ok) throw new Error(`${file}: ${loaded.diagnostics.map((d) => d.message).join('; ')}`);
  return loaded.storyboard;
}

/** The corpus storyboards that load (a few of 3.0.6's scenarios read context their composing storyboard sets). */
const corpusStoryboards = listCorpus(corpus.root).flatMap((entry) => {
  const loaded = loadStoryboard(readFileSync(entry.file, 'utf8'), entry.file);
  return loaded.ok ? [loaded.storyboard] : [];
});
const signedRequests = corpusStoryboards.find((s) => s.id === 'signed_requests')!;
const base: RuntimeConfig = { agentUrl: 'http://127.0.0.1:9/mcp', corpusRoot: corpus.root, timeoutMs: 1_000 };

/** What an opened run says, and what settleBoundOf says, for one storyboard and config. */
function both(storyboard: Storyboard, config: RuntimeConfig) {
  const run = openStoryboardRun(storyboard, config, { env: {} });
  return { opened: run.worstCaseMs(), computed: settleBoundOf(storyboard, config, { env: {} }) };
}

describe('settleBoundOf: the bound of a settle without opening a run', () => {
  it("is the opened run's bound for every storyboard of the corpus, with and without the settings a role's bound reads", () => {
    expect(corpusStoryboards.length).toBeGreaterThan(40);
    const configs: RuntimeConfig[] = [
      base,
      { ...base, timeoutMs: 7_000 },
      { ...base, skipRateAbuse: true },
      { ...base, runnerContracts: { rate_limit_trip_runner: true } },
    ];
    const differ = corpusStoryboards.flatMap((storyboard) =>
      configs
        .map((config) => ({ id: storyboard.id, config, ...both(storyboard, config) }))
        .filter((r) => r.opened !== r.computed),
    );
    expect(differ).toEqual([]);
  });

  // A worker's step session plans the storyboard for its tests' meta (adapter/planned-steps.ts planOf) and gives that
  // plan to the bound (vitest/suite.ts), rather than planning it again.
  it("is the same bound from the plan the worker's step session made, for every storyboard of the corpus", () => {
    const differ = corpusStoryboards
      .map((storyboard) => {
        const steps = planOf(storyboard, { corpusRoot: base.corpusRoot }).map(({ step }) => step);
        const run = openStoryboardRun(storyboard, base, { env: {} });
        return {
          id: storyboard.id,
          opened: run.worstCaseMs(),
          computed: settleBoundOf(storyboard, base, { env: {}, steps }),
        };
      })
      .filter((r) => r.opened !== r.computed);
    expect(differ).toEqual([]);
    // The steps given are the ones counted: without the injected ones, the bound is lower.
    const own = signedRequests.phases.flatMap((phase) => phase.steps);
    expect(settleBoundOf(signedRequests, base, { env: {}, steps: own })).toBeLessThan(
      settleBoundOf(signedRequests, base, { env: {} }),
    );
  });

  it("reads the roles' own bounds: the request-signing flood window from the test kit, the rate-limit trip in scope", () => {
    const plain = settleBoundOf(signedRequests, base, { env: {} });
    // The kit's rate_abuse window (60 s) is in the bound unless the operator opted out of vector 020.
    expect(plain - settleBoundOf(signedRequests, { ...base, skipRateAbuse: true }, { env: {} })).toBe(60_000 + 1_000);
    // universal/idempotency.yaml's trip (3.1), in a storyboard of its own: in scope, its attempts and its replay wait.
    const tripFile = join(fixtures, 'trip.storyboard.yaml');
    const loaded = loadStoryboard(
      [
        'id: trip_only',
        'title: Trip',
        'phases:',
        '  - id: main',
        '    title: Main',
        '    steps:',
        '      - id: trip',
        '        title: Trip',
        '        task: expect_rate_limit_not_replayed',
        '        requires_contract: rate_limit_trip_runner',
        '        rate_limit_trip: { trip_target_task: create_media_buy, max_attempts: 50, replay_max_wait_seconds: 30, trip_target_sample_request: {} }',
        '',
      ].join('\n'),
      tripFile,
    );
    if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => d.message).join('; '));
    const idempotency = loaded.storyboard;
    const trip = settleBoundOf(
      idempotency,
      { ...base, runnerContracts: { rate_limit_trip_runner: true } },
      { env: {} },
    );
    expect(trip).toBe((50 + 2) * 1_000 + 30_000 + 3 * 1_000);
    expect(both(idempotency, { ...base, runnerContracts: { rate_limit_trip_runner: true } }).opened).toBe(trip);
    // Out of scope, the step is graded not_applicable: the engine's own bound for a step.
    expect(settleBoundOf(idempotency, base, { env: {} })).toBe(1_000 + rateLimitBoundMs(1_000) + 3 * 1_000);
  });

  it('is every step within timeoutMs and its rate-limit resends, plus three calls, for a storyboard no role adds to', () => {
    const discovery = load(join(fixtures, 'discovery.storyboard.yaml'));
    const steps = discovery.phases.flatMap((p) => p.steps).length;
    expect(settleBoundOf(discovery, base, { env: {} })).toBe(steps * (1_000 + rateLimitBoundMs(1_000)) + 3 * 1_000);
    expect(both(discovery, base).opened).toBe(settleBoundOf(discovery, base, { env: {} }));
  });

  it("gives a role's bound the storyboard's test kit, read when the role asks for it, as an opened run does", () => {
    const discovery = load(join(fixtures, 'discovery.storyboard.yaml'));
    expect(discovery.prerequisites?.test_kit).toBeDefined();
    // A role whose every step is bounded by a value of the kit (its brand's name length, in seconds).
    const kitRole: RunnerRole = {
      name: 'kit-bound',
      tasks: new Set(),
      stepBoundMs: (_step, settings) =>
        settings.testKit ? JSON.stringify(settings.testKit).length * 1_000 : undefined,
      open: () => ({}),
    };
    const roles = [...BUILTIN_ROLES, kitRole];
    const config = { ...base, projectRoot: join(fixtures, '..') };
    const opened = openStoryboardRun(discovery, config, { env: {}, roles }).worstCaseMs();
    const computed = settleBoundOf(discovery, config, { env: {}, roles });
    expect(computed).toBe(opened);
    expect(computed).toBeGreaterThan(settleBoundOf(discovery, config, { env: {} }));
  });
});
