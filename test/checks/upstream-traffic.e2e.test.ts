/**
 * `upstream_traffic` (src/checks/upstream-traffic.ts, src/engine/upstream.ts) against the fixture agent's recorded
 * upstream calls (fixtures/agent/upstream.mjs): it passes on an adapter that forwards what the buyer sent, fails on a
 * façade (nothing recorded) and on placeholders, is not applicable when the controller does not offer the scenario,
 * and the runner's query (its window, its mode) is what the spec asks for.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import type { ValidationResult } from '../../src/model/records.js';
import { phasedStoryboard, runInline, type InlineStep } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

let sessions = 0;
const MEDIA_BUY = {
  account: { brand: { domain: 'fixture-brand.example' }, operator: 'pinnacle-agency.example' },
  brand: { domain: 'fixture-brand.example' },
  po_number: 'PO-UPSTREAM-7',
  start_time: 'asap',
  end_time: '2027-06-30T23:59:59Z',
  packages: [{ product_id: 'prod_video_preroll', pricing_option_id: 'po_video_preroll_cpm', budget: 5000 }],
};

/** One create_media_buy step with the given upstream_traffic validation(s), on a fresh sandbox with `behaviours`. */
async function book(validations: Record<string, unknown>[], behaviours: string[], before: InlineStep[] = []) {
  const session = `up${++sessions}`;
  const yaml = phasedStoryboard([
    {
      id: 'main',
      steps: [...before, { id: 'book', task: 'create_media_buy', sample_request: MEDIA_BUY, validations }],
    },
  ]);
  const steps = await runInline(yaml, agent.urlFor([...behaviours, `session_${session}`]));
  const queries = agent.calls
    .filter((c) => c.session === session && c.tool === 'comply_test_controller')
    .map((c) => c.arguments as { scenario: string; params?: Record<string, unknown> });
  return { step: steps.book!, v: steps.book!.result.validations[0] as ValidationResult, queries };
}

const forwards = {
  check: 'upstream_traffic',
  endpoint_pattern: 'POST */v1/campaigns',
  min_count: 1,
  identifier_paths: ['packages[*].product_id', 'brand.domain'],
  payload_must_contain: [
    { path: 'line_items[*].sku', match: 'present' },
    { path: 'order_reference', match: 'equals', value: 'PO-UPSTREAM-7' },
    { path: 'line_items[*].budget', match: 'contains_any', allowed_values: [5000, 10000] },
  ],
  description: 'create_media_buy forwarded the booking upstream',
};

describe('upstream_traffic', () => {
  it("passes on an adapter that forwards the buyer's values; the runner asked raw, for the window of its own request", async () => {
    const before = Date.now();
    const { step, v, queries } = await book([forwards], ['upstream_recorder']);
    expect(step.status).toBe('passed');
    expect(v).toMatchObject({
      passed: true,
      expected: { min_count: 1, endpoint_pattern: 'POST */v1/campaigns' },
      actual: { matched_count: 1, total_calls: 1, missing_payload_paths: [], missing_identifier_values: [] },
      schema_id: null,
    });
    expect(queries.map((q) => q.scenario)).toEqual(['list_scenarios', 'query_upstream_traffic']);
    const params = queries[1]!.params!;
    expect(params.attestation_mode).toBe('raw');
    // The inclusive lower bound is the runner's clock at the request, less 250 ms of skew tolerance.
    const since = Date.parse(params.since_timestamp as string);
    expect(since).toBeGreaterThanOrEqual(before - 250);
    expect(since).toBeLessThanOrEqual(Date.now() - 250);
  });

  it('fails a façade that lists the scenario and records nothing, with the controller query as the record', async () => {
    const { step, v } = await book([forwards], ['upstream_facade']);
    expect(step.status).toBe('failed');
    expect(v).toMatchObject({
      passed: false,
      json_pointer: null,
      actual: { matched_count: 0, total_calls: 0 },
      error: expect.stringMatching(/^expected at least 1 matching upstream call\(s\), observed 0 of 0/),
      request: { operation: 'comply_test_controller', payload: { scenario: 'query_upstream_traffic' } },
      response: { payload: expect.anything() },
    });
  });

  it('fails placeholders: the identifiers the request sent never reached upstream, the payload does not hold the values', async () => {
    const { v } = await book([forwards], ['upstream_placeholder']);
    expect(v).toMatchObject({
      passed: false,
      json_pointer: '/recorded_calls/0/payload',
      actual: {
        matched_count: 1,
        missing_payload_paths: ['order_reference', 'line_items[*].budget'],
        missing_identifier_values: ['prod_video_preroll', 'fixture-brand.example'],
      },
    });
  });

  it('endpoint_pattern is anchored and `*` crosses slashes; min_count 0 asserts no call', async () => {
    const other = await book([{ check: 'upstream_traffic', endpoint_pattern: 'GET *' }], ['upstream_recorder']);
    expect(other.v).toMatchObject({ passed: false, actual: { matched_count: 0, total_calls: 1 } });
    const anchored = await book([{ check: 'upstream_traffic', endpoint_pattern: '*/v1' }], ['upstream_recorder']);
    expect(anchored.v.passed).toBe(false);
    const none = await book(
      [{ check: 'upstream_traffic', min_count: 0, endpoint_pattern: 'DELETE *' }],
      ['upstream_recorder'],
    );
    expect(none.v.passed).toBe(true);
    const some = await book([{ check: 'upstream_traffic', min_count: 0 }], ['upstream_recorder']);
    expect(some.v).toMatchObject({ passed: false, error: 'expected no matching upstream call, observed 1' });
  });

  it('purpose_filter keeps only calls of those purposes, and counts the unclassified when it matches none', async () => {
    const primary = await book(
      [{ check: 'upstream_traffic', purpose_filter: ['platform_primary'] }],
      ['upstream_recorder'],
    );
    expect(primary.v.passed).toBe(true);
    const measurement = await book(
      [{ check: 'upstream_traffic', purpose_filter: ['measurement'] }],
      ['upstream_recorder'],
    );
    expect(measurement.v).toMatchObject({ passed: false, actual: { matched_count: 0, unclassified_calls: 0 } });
  });

  it('is not applicable — passed, with a note — when the controller does not offer query_upstream_traffic', async () => {
    const { step, v, queries } = await book([forwards], []);
    expect(step.status).toBe('passed');
    expect(v).toMatchObject({
      passed: true,
      note: 'query_upstream_traffic scenario not advertised in comply_test_controller list_scenarios — graded as not_applicable',
    });
    expect(queries.map((q) => q.scenario)).toEqual(['list_scenarios']);
    const noController = await book([forwards], ['without@comply_test_controller']);
    expect(noController.v.note).toMatch(/^the agent does not advertise comply_test_controller/);
  });

  it('digest attestations: payload assertions are not applicable; attestation_mode_required: raw makes the whole check so', async () => {
    const digest = await book([forwards], ['upstream_digest']);
    expect(digest.v).toMatchObject({ passed: true, note: expect.stringMatching(/digest or non-JSON calls/) });
    const raw = await book([{ ...forwards, attestation_mode_required: 'raw' }], ['upstream_digest']);
    expect(raw.v).toMatchObject({ passed: true, note: expect.stringMatching(/^attestation_mode_required: raw/) });
    const countOnly = await book([{ check: 'upstream_traffic', endpoint_pattern: 'POST *' }], ['upstream_digest']);
    expect(countOnly.v).toMatchObject({ passed: true, actual: { matched_count: 1 } });
    expect(countOnly.v.note).toBeUndefined();
  });

  it("since: <step> widens the window to an earlier step's request; a since naming no earlier step fails", async () => {
    const first = { id: 'first', task: 'create_media_buy', sample_request: { ...MEDIA_BUY, po_number: 'PO-FIRST' } };
    const wide = await book(
      [{ check: 'upstream_traffic', since: 'first', min_count: 2 }],
      ['upstream_recorder'],
      [first],
    );
    expect(wide.v).toMatchObject({ passed: true, actual: { matched_count: 2 } });
    // Past the 250 ms skew tolerance (a slow step between), the earlier call falls out of this step's own window.
    const pause = { id: 'pause', task: 'get_adcp_capabilities' };
    const narrow = await book(
      [{ check: 'upstream_traffic', min_count: 2 }],
      ['upstream_recorder', 'slow_ms_400@get_adcp_capabilities'],
      [first, pause],
    );
    expect(narrow.v.passed).toBe(false);
    const unknown = await book([{ check: 'upstream_traffic', since: 'never_ran' }], ['upstream_recorder']);
    expect(unknown.v).toMatchObject({
      passed: false,
      error: 'since: "never_ran" names no earlier step of this run that sent a request',
    });
  });
});
