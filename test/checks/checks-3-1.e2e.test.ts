/**
 * The check kinds AdCP 3.1 adds (src/checks/kinds.ts, since '3.1'), and the 3.1 validation fields (`id`, `severity`,
 * `expires_after_version`), against the real fixture agent: each passing on the conformant endpoint and failing on
 * one that misbehaves in the way the check exists to catch, with the runner-output contract's fields.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import { runInline, storyboard } from '../helpers/inline-run.js';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

const capabilities = (validation: string, extra = '') =>
  storyboard(`- id: caps
  title: Capabilities
  task: get_adcp_capabilities
  sample_request:
    context:
      correlation_id: "inline--caps"
${extra}  validations:
${validation.replace(/^/gm, '    ')}`);

const first = async (yaml: string, url: string) => {
  const { caps } = await runInline(yaml, url);
  return { status: caps!.status, v: caps!.result.validations[0]!, result: caps!.result };
};

describe('field_absent', () => {
  const yaml = capabilities(`- check: field_absent
  path: specialisms
  description: No specialism is claimed`);

  it('passes when the field is absent, fails naming the value found when it is there', async () => {
    expect((await first(yaml, agent.url)).status).toBe('passed');
    const bad = await first(yaml, agent.urlFor(['unknown_declarations']));
    expect(bad.status).toBe('failed');
    expect(bad.v).toMatchObject({
      passed: false,
      json_pointer: '/specialisms',
      expected: null,
      actual: ['sales-guaranteed', 'holographic-ads'],
      schema_id: null,
      schema_url: null,
      request: expect.any(Object),
      response: expect.any(Object),
    });
  });

  it('counts JSON null as absent', async () => {
    const yaml2 = capabilities(`- check: field_absent
  path: context.nothing`);
    expect((await first(yaml2, agent.url)).status).toBe('passed');
  });
});

describe('envelope_field_absent and envelope_field_pattern read the protocol envelope', () => {
  it('envelope_field_absent passes without the field, fails with it', async () => {
    const absent = capabilities(`- check: envelope_field_absent
  path: task_id`);
    expect((await first(absent, agent.url)).status).toBe('passed');
    const present = capabilities(`- check: envelope_field_absent
  path: status`);
    const bad = await first(present, agent.url);
    expect(bad.status).toBe('failed');
    expect(bad.v).toMatchObject({ expected: null, actual: 'completed', json_pointer: '/status' });
  });

  it('envelope_field_pattern matches the envelope status', async () => {
    const ok = capabilities(`- check: envelope_field_pattern
  path: status
  pattern: "^(completed|submitted)$"`);
    expect((await first(ok, agent.url)).status).toBe('passed');
    const bad = capabilities(`- check: envelope_field_pattern
  path: status
  pattern: "^submitted$"`);
    expect((await first(bad, agent.url)).v).toMatchObject({
      passed: false,
      expected: { pattern: '^submitted$' },
      actual: 'completed',
    });
  });
});

describe('field_pattern', () => {
  const yaml = capabilities(`- check: field_pattern
  path: context.correlation_id
  pattern: "^inline--[a-z]+$"`);

  it('passes on a matching string, fails on a changed one, on a missing one and on a non-string', async () => {
    expect((await first(yaml, agent.url)).status).toBe('passed');
    expect((await first(yaml, agent.urlFor(['wrong_value']))).v).toMatchObject({
      passed: false,
      expected: { pattern: '^inline--[a-z]+$' },
      actual: 'inline--caps-mutated',
      json_pointer: '/context/correlation_id',
    });
    expect((await first(yaml, agent.urlFor(['drop_context']))).v).toMatchObject({
      passed: false,
      actual: null,
      error: '"context.correlation_id" is missing from the response',
    });
    const number = capabilities(`- check: field_pattern
  path: adcp.major_versions[0]
  pattern: "3"`);
    expect((await first(number, agent.url)).v).toMatchObject({
      passed: false,
      actual: 3,
      error: '"adcp.major_versions[0]" is a number, not a string',
    });
  });
});

describe('field_contains', () => {
  it('passes when any value at a wildcard path matches; fails with every value resolved', async () => {
    const yaml = capabilities(`- check: field_contains
  path: supported_protocols[*]
  value: creative`);
    expect((await first(yaml, agent.url)).status).toBe('passed');
    const missing = capabilities(`- check: field_contains
  path: supported_protocols[]
  allowed_values: [signals, governance]`);
    expect((await first(missing, agent.url)).v).toMatchObject({
      passed: false,
      expected: ['signals', 'governance'],
      actual: ['media_buy', 'creative'],
    });
  });

  it('matches objects and arrays as deep subsets, in any order', async () => {
    const subset = capabilities(`- check: field_contains
  path: adcp
  value: { idempotency: { supported: true } }`);
    expect((await first(subset, agent.url)).status).toBe('passed');
    const order = capabilities(`- check: field_contains
  path: supported_protocols
  value: [creative, media_buy]`);
    expect((await first(order, agent.url)).status).toBe('passed');
    const wrong = capabilities(`- check: field_contains
  path: adcp
  value: { idempotency: { supported: false } }`);
    expect((await first(wrong, agent.url)).status).toBe('failed');
    const nothing = capabilities(`- check: field_contains
  path: nowhere[*].id
  value: x`);
    expect((await first(nothing, agent.url)).v).toMatchObject({
      actual: [],
      error: expect.stringMatching(/resolves to nothing/),
    });
  });
});

describe('cross-step comparisons: field_equals_context and field_less_than', () => {
  const twoSteps = (validation: string) =>
    storyboard(`- id: baseline
  title: Baseline
  task: get_adcp_capabilities
  sample_request: { context: { correlation_id: "inline--base" } }
  context_outputs:
    - { name: majors, path: adcp.major_versions }
    - { name: protocol_count, path: supported_protocols.length }
- id: caps
  title: Again
  task: get_adcp_capabilities
  sample_request: { context: { correlation_id: "inline--caps" } }
  validations:
${validation.replace(/^/gm, '    ')}`);

  it('field_equals_context passes on the value a prior step captured; the expected value is that runtime value', async () => {
    const yaml = twoSteps(`- check: field_equals_context
  path: adcp.major_versions
  context_key: majors`);
    expect((await first(yaml, agent.url)).status).toBe('passed');
    const other = twoSteps(`- check: field_equals_context
  path: supported_protocols
  context_key: majors`);
    expect((await first(other, agent.url)).v).toMatchObject({
      passed: false,
      expected: [3],
      actual: ['media_buy', 'creative'],
    });
  });

  it('field_less_than compares finite numbers, against a captured value or a literal', async () => {
    const ctx = twoSteps(`- check: field_less_than
  path: adcp.major_versions[0]
  context_key: protocol_count`);
    expect((await first(ctx, agent.url)).v).toMatchObject({ passed: false, expected: 2, actual: 3 });
    const literal = twoSteps(`- check: field_less_than
  path: supported_protocols.length
  value: 3`);
    expect((await first(literal, agent.url)).status).toBe('passed');
    const notNumber = twoSteps(`- check: field_less_than
  path: supported_protocols
  value: 3`);
    expect((await first(notNumber, agent.url)).v).toMatchObject({
      passed: false,
      error: expect.stringMatching(/not a finite number/),
    });
  });

  it('a context_key nothing captured passes with a context_key_absent observation (the capture is graded where it failed)', async () => {
    const yaml = twoSteps(`- check: field_equals_context
  path: adcp
  context_key: never_captured`);
    const caps = await first(yaml, agent.url);
    expect(caps.status).toBe('passed');
    expect(caps.v.observations).toEqual([expect.stringMatching(/^context_key_absent: "never_captured"/)]);
  });
});

describe('a2a_context_continuity', () => {
  const yaml = storyboard(`- id: one
  task: get_adcp_capabilities
- id: caps
  task: get_adcp_capabilities
  validations:
    - check: a2a_context_continuity`);

  it('over A2A the follow-up send names the prior context and the Task must be in it', async () => {
    const ok = await runInline(yaml, agent.a2aUrl, { protocol: 'a2a' });
    expect(ok.caps!.status).toBe('passed');
    expect(ok.caps!.result.validations[0]).toMatchObject({ passed: true, json_pointer: '/contextId' });
    // The fixture echoes a context the message names and mints one otherwise: a pass shows the runner sent it.
    const fresh = await runInline(yaml, agent.a2aUrlFor(['a2a_fresh_context']), { protocol: 'a2a' });
    expect(fresh.caps!.status).toBe('failed');
    expect(fresh.caps!.result.validations[0]).toMatchObject({ passed: false, json_pointer: '/contextId' });
  });

  it('over MCP it does not apply: passed, with an observation', async () => {
    const { caps } = await runInline(yaml, agent.url);
    expect(caps!.status).toBe('passed');
    expect(caps!.result.validations[0]!.observations).toEqual([expect.stringMatching(/over mcp/)]);
  });
});

describe('validation id and severity (contract 2.6.0)', () => {
  it('echoes the validation id; an advisory failure is reported but does not fail the step', async () => {
    const yaml = capabilities(`- id: caps.protocols
  check: field_present
  path: supported_protocols
- id: caps.advisory
  check: field_present
  path: not_there
  severity: advisory
  permanent_advisory: { reason: "rolled out later" }`);
    const caps = await first(yaml, agent.url);
    expect(caps.status).toBe('passed');
    expect(caps.result.validations.slice(0, 2)).toMatchObject([
      { id: 'caps.protocols', passed: true },
      { id: 'caps.advisory', passed: false, severity: 'advisory' },
    ]);
    expect(caps.result.validations[1]).not.toHaveProperty('severity_promoted_from_advisory');
  });

  it('an advisory past its expiry is promoted to required and fails the step; before it, it stays advisory', async () => {
    const expired = capabilities(`- check: field_present
  path: not_there
  severity: advisory
  expires_after_version: "3.1.0"`);
    const promoted = await first(expired, agent.url);
    expect(promoted.status).toBe('failed');
    expect(promoted.v).toMatchObject({ severity: 'required', severity_promoted_from_advisory: true });
    const later = capabilities(`- check: field_present
  path: not_there
  severity: advisory
  expires_after_version: "9.0.0-0"`);
    const kept = await first(later, agent.url);
    expect(kept.status).toBe('passed');
    expect(kept.v).toMatchObject({ passed: false, severity: 'advisory', severity_promoted_from_advisory: false });
  });

  it('a required failure still fails the step, with severity as written', async () => {
    const yaml = capabilities(`- check: field_present
  path: not_there
  severity: required`);
    const caps = await first(yaml, agent.url);
    expect(caps.status).toBe('failed');
    expect(caps.v.severity).toBe('required');
  });
});
