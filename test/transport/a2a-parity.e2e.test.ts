/**
 * A2A agents are graded exactly as MCP ones: the same storyboards through the
 * same engine (openStoryboardRun, as the Vitest adapter runs them) against the
 * fixture agent's MCP endpoint and its A2A twin — the same tasks, sandboxes
 * and misbehaviour switches — must give every step the same grading: verdict,
 * skip reason, extraction path, each validation's outcome, whether it errored.
 * (Outside the mutation-testing scope on purpose: tens of seconds per run.)
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { resolveCorpus } from '../../src/corpus.js';
import type { StepOutcome } from '../../src/model/records.js';
import type { Storyboard } from '../../src/model/storyboard.js';
import { openStoryboardRun } from '../../src/open-run.js';
import { listCorpus } from '../../src/storyboard/select.js';
import { loadStoryboardFile } from '../../src/storyboard/load.js';
import { repoRoot } from '../helpers/run-vitest.js';

const PROTOCOLS = ['mcp', 'a2a'] as const;
type Protocol = (typeof PROTOCOLS)[number];

const corpus = resolveCorpus(undefined);
const fixtureDir = join(repoRoot, 'fixtures', 'storyboards');
const FIXTURE_FILES = readdirSync(fixtureDir)
  .filter((f) => f.endsWith('.storyboard.yaml'))
  .map((f) => join(fixtureDir, f));
/** Corpus storyboards the fixture agent implements end to end: green over MCP, so over A2A too. */
const GREEN_CORPUS = [
  'capability_discovery',
  'security_baseline',
  'media_buy_seller/create_media_buy_async',
  'media_buy_seller/inventory_list_no_match',
  'governance_aware_seller',
];
/** Corpus files that exercise the fixture's tasks, for the behaviour-by-behaviour comparison. */
const SUBSET = [
  'universal/capability-discovery.yaml',
  'universal/security.yaml',
  'universal/error-compliance.yaml',
  'universal/idempotency.yaml',
  'universal/v3-envelope-integrity.yaml',
  'universal/deterministic-testing.yaml',
  'protocols/media-buy/index.yaml',
  'protocols/media-buy/scenarios/create_media_buy_async.yaml',
  'protocols/media-buy/scenarios/inventory_list_no_match.yaml',
  'protocols/media-buy/scenarios/refine_products.yaml',
].map((p) => join(corpus.root, p));

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent({ hugeBytes: 2 * 1024 * 1024 });
});
afterAll(() => agent?.close());

let principals = 0;

/** One storyboard file, run to the end over one protocol; every step's outcome by `phase/step`. */
/** Each file loaded once: it is run twice per behaviour, over 20-odd behaviours, and parsing its YAML each time was a sixth of this file's CPU. */
const storyboards = new Map<string, Storyboard>();
function storyboardOf(file: string): Storyboard {
  let storyboard = storyboards.get(file);
  if (!storyboard) {
    const loaded = loadStoryboardFile(file, { corpusRoot: corpus.root });
    if (!loaded.ok) throw new Error(`${file} does not load`);
    storyboards.set(file, (storyboard = loaded.storyboard));
  }
  return storyboard;
}

async function runFile(file: string, protocol: Protocol, behaviours: string[] = []): Promise<Map<string, StepOutcome>> {
  const agentUrl = protocol === 'a2a' ? agent.a2aUrlFor(behaviours) : agent.urlFor(behaviours);
  // A principal of its own: sandboxes and idempotency keys never cross runs.
  const run = openStoryboardRun(
    storyboardOf(file),
    {
      agentUrl,
      protocol,
      authToken: `demo-parity-${++principals}`,
      corpusRoot: corpus.root,
      timeoutMs: 3_000,
      maxResponseBytes: 1024 * 1024,
    },
    { env: {} },
  );
  try {
    return new Map((await run.runAll()).map((o) => [`${o.result.phase_id}/${o.result.step_id}`, o]));
  } finally {
    await run.close();
  }
}

/** Everything about a step's grading that must not depend on the transport. */
function grading(o: StepOutcome): string {
  const r = o.result;
  const verdict = o.status === 'skipped' ? `skipped:${r.skip?.reason}` : o.status;
  return [
    verdict,
    r.extraction.path,
    r.validations.map((v) => `${v.check}${v.passed ? '✓' : '✗'}`).join(','),
    r.error ? 'error' : '',
  ].join(' | ');
}

/** The steps whose grading differs between the two runs. */
function differences(mcp: Map<string, StepOutcome>, a2a: Map<string, StepOutcome>): string[] {
  const out: string[] = [];
  for (const key of new Set([...mcp.keys(), ...a2a.keys()])) {
    const m = mcp.get(key);
    const a = a2a.get(key);
    if (!m || !a || grading(m) !== grading(a))
      out.push(
        `${key}: mcp ${m ? grading(m) : '-'} / a2a ${a ? grading(a) : '-'}${a?.result.error ? ` (${a.result.error})` : ''}`,
      );
  }
  return out;
}

/** Both runs of each file; `graded` is the MCP run's grading of every step (to tell behaviours apart). */
async function compare(
  files: string[],
  behaviours: string[] = [],
): Promise<{ steps: number; differ: string[]; graded: Map<string, string> }> {
  let steps = 0;
  const differ: string[] = [];
  const graded = new Map<string, string>();
  for (const file of files) {
    const [mcp, a2a] = [await runFile(file, 'mcp', behaviours), await runFile(file, 'a2a', behaviours)];
    steps += mcp.size;
    const name = file.replace(/^.*\/(compliance\/cache\/[^/]+\/|fixtures\/)/, '');
    differ.push(...differences(mcp, a2a).map((d) => `${name} ${d}`));
    for (const [key, o] of mcp) graded.set(`${name} ${key}`, grading(o));
  }
  return { steps, differ, graded };
}

describe.each(PROTOCOLS)('over %s', (protocol) => {
  it.each(FIXTURE_FILES.map((f) => [f.slice(fixtureDir.length + 1), f]))(
    'the fixture storyboard %s passes every step',
    async (_, file) => {
      const outcomes = await runFile(file, protocol);
      expect(outcomes.size).toBeGreaterThan(0);
      for (const [key, o] of outcomes)
        expect(
          o.status,
          `${key}: ${o.result.error ?? JSON.stringify(o.result.validations.filter((v) => !v.passed))}`,
        ).toBe('passed');
      // Every call to the agent goes over the protocol; the runner's own OAuth discovery probes are plain HTTP GETs.
      for (const o of outcomes.values())
        expect(o.result.request?.transport).toBe(
          ['protected_resource_metadata', 'oauth_auth_server_metadata'].includes(o.result.task) ? 'http' : protocol,
        );
    },
  );

  it('the corpus storyboards the fixture implements pass every step', async () => {
    const files = listCorpus(corpus.root).filter((e) => GREEN_CORPUS.some((id) => e.id === id));
    expect(new Set(files.map((e) => e.id))).toEqual(new Set(GREEN_CORPUS));
    for (const entry of files) {
      for (const [key, o] of await runFile(entry.file, protocol))
        expect(o.status, `${entry.path} ${key}: ${o.result.error ?? o.result.skip?.detail ?? ''}`).not.toBe('failed');
    }
  });
});

it('every corpus storyboard is graded the same over A2A as over MCP, step by step', async () => {
  const { steps, differ } = await compare(listCorpus(corpus.root).map((e) => e.file));
  expect(steps).toBeGreaterThan(450);
  expect(differ).toEqual([]);
});

describe('misbehaviour by misbehaviour, the A2A twin is graded as the MCP endpoint', () => {
  const async = 'async_submitted@create_media_buy';
  let conformant: Promise<Map<string, string>> | undefined;
  /** The grading on the conformant endpoints, to show that each switch does something. */
  const baseline = () => (conformant ??= compare([...FIXTURE_FILES, ...SUBSET]).then((c) => c.graded));

  // changes: the switch changes some step's grading; 'polls': graded the same, on the async task's completion.
  it.each<[string[], true | 'none' | 'polls']>([
    [['wrong_value'], true],
    [['drop_context'], true],
    [['schema_invalid'], true],
    [['error_response'], true],
    [['error_errors_array'], true],
    [['error_jsonrpc'], true],
    [['missing_auth_check'], true],
    [['no_www_authenticate'], true],
    [['wrong_resource'], true],
    [['no_oauth'], true],
    [['unknown_declarations'], true],
    [['without@list_creatives', 'without@comply_test_controller'], true],
    [['no_seed'], true],
    [[async], 'polls'],
    [[async, 'async_polls_3'], 'polls'],
    [['async_working@create_media_buy'], 'polls'],
    [[async, 'async_bare_result'], 'polls'],
    [[async, 'async_failed'], true],
    [['json_response'], 'none'],
    [['slow_ms_20'], 'none'],
    [['garbage@get_products'], true],
    [['huge@get_products'], true],
  ])('%s', async (behaviours, changes) => {
    const base = await baseline();
    agent.resetCalls();
    const { steps, differ, graded } = await compare([...FIXTURE_FILES, ...SUBSET], behaviours);
    expect(steps).toBeGreaterThan(80);
    expect(differ).toEqual([]);
    const changed = [...graded].filter(([key, g]) => base.get(key) !== g).map(([key]) => key);
    if (changes === true) expect(changed.length).toBeGreaterThan(0);
    else expect(changed).toEqual([]);
    // Graded the same because both followed the AdCP task through the tasks/get task (MCP tool, A2A skill), as often.
    const polled = agent.callsFor('tasks/get').length;
    if (changes === 'polls') expect(polled > 0 && polled % 2 === 0, `${polled} tasks/get calls`).toBe(true);
  });

  it('text_only / error_text_only differ, as the bindings do: MCP reads JSON from content[].text, A2A reads DataParts only', async () => {
    for (const behaviour of ['text_only', 'error_text_only@get_products']) {
      const file = join(fixtureDir, 'products.storyboard.yaml');
      const [mcp, a2a] = [await runFile(file, 'mcp', [behaviour]), await runFile(file, 'a2a', [behaviour])];
      const step = 'product_discovery/get_products_by_brief';
      expect(mcp.get(step)!.result.extraction.path, behaviour).toBe(
        behaviour === 'text_only' ? 'text_fallback' : 'error',
      );
      expect(a2a.get(step)!.result.extraction, behaviour).toMatchObject({
        path: behaviour === 'text_only' ? 'none' : 'error',
        note: expect.stringMatching(/without a DataPart/),
      });
      expect(a2a.get(step)!.status).toBe('failed');
    }
  });
});
