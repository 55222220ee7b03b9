/**
 * Secrets in what a failing step renders and records, on a real run: the
 * fixture agent echoes the request context, so a storyboard that sends the
 * run's own credentials makes the agent hand them back. Neither the failure
 * message (nor its diff) nor the contract record may show them; secret-bearing
 * keys are redacted in `expected` as in every other payload.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFixtureAgent, type FixtureAgent } from '../../fixtures/agent/server.mjs';
import type { StepResult } from '../../src/model/records.js';
import { formatStepFailure } from '../../src/report/format.js';
import { buildReport } from '../../src/report/build.js';
import { renderHtmlReport } from '../../src/report/html.js';
import { renderMarkdownSummary } from '../../src/report/markdown.js';
import { redactStepResult } from '../../src/report/record.js';
import { openInline, storyboard } from '../helpers/inline-run.js';

/** The configured token (the agent accepts any `demo-` Bearer) and the test kit's key. */
const TOKEN = 'demo-scrub-token-7c1e';
const KIT_KEY = 'demo-scrub-kit-4410';
/** Written by the storyboard author under a secret-bearing key of an expected value. */
const EXPECTED_SECRET = 'planted-in-expected-93d2';

let agent: FixtureAgent;
beforeAll(async () => {
  agent = await startFixtureAgent();
});
afterAll(() => agent?.close());

let ran: Promise<{ result: StepResult; secrets: string[] }> | undefined;
/** The failing step and the run's secrets: one run, made by the first test that asks (inside a test, so mutation testing credits it). */
function echoRun() {
  return (ran ??= (async () => {
    const yaml = storyboard(`- id: echo
  task: get_adcp_capabilities
  sample_request:
    context: { correlation_id: "${TOKEN}", kit: "${KIT_KEY}" }
  validations:
    - check: field_value
      path: context
      value: { correlation_id: "x", api_key: "${EXPECTED_SECRET}" }
    - check: field_value
      path: context.correlation_id
      value: "something-else"`);
    const run = openInline(yaml, agent.url, { authToken: TOKEN, testKit: { auth: { api_key: KIT_KEY } } });
    try {
      const [echo] = await run.runAll();
      return { result: echo!.result, secrets: run.secrets() };
    } finally {
      await run.close();
    }
  })());
}

it('the agent did echo both credentials (so the checks below test something)', async () => {
  const { result, secrets } = await echoRun();
  expect(result.passed).toBe(false);
  const raw = JSON.stringify(result);
  expect(raw).toContain(TOKEN);
  expect(raw).toContain(KIT_KEY);
  expect(secrets).toEqual(expect.arrayContaining([TOKEN, KIT_KEY]));
});

describe('the run secrets reach the scrubber', () => {
  it('the failure message and its diff show neither the token nor the test-kit key', async () => {
    const { result, secrets } = await echoRun();
    const formatted = formatStepFailure(result, { secrets });
    const shown = JSON.stringify(formatted);
    expect(shown).not.toContain(TOKEN);
    expect(shown).not.toContain(KIT_KEY);
    // Where the echo was, the reader sees that something was removed.
    expect(formatted.message).toContain('[redacted]');
    expect(formatted.actual).toEqual({ correlation_id: '[redacted]', kit: '[redacted]' });
  });

  it('the contract record shows neither', async () => {
    const { result, secrets } = await echoRun();
    const record = redactStepResult(result, secrets);
    const text = JSON.stringify(record);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(KIT_KEY);
    expect(record.validations[1]).toMatchObject({ expected: 'something-else', actual: '[redacted]' });
    expect((record.request!.payload as any).context).toEqual({ correlation_id: '[redacted]', kit: '[redacted]' });
  });
});

describe('expected values are redacted like payloads', () => {
  it('a secret-bearing key inside an expected value is redacted in the record, the message and the diff', async () => {
    const { result, secrets } = await echoRun();
    const record = redactStepResult(result, secrets);
    expect(record.validations[0]!.expected).toEqual({ correlation_id: 'x', api_key: '[redacted]' });
    expect(JSON.stringify(record)).not.toContain(EXPECTED_SECRET);
    // As the adapter renders it (from the record), and from the engine's own result.
    for (const formatted of [formatStepFailure(record, { secrets }), formatStepFailure(result, { secrets })]) {
      expect(formatted.expected).toEqual({ correlation_id: 'x', api_key: '[redacted]' });
      expect(JSON.stringify(formatted)).not.toContain(EXPECTED_SECRET);
    }
  });
});

describe('the markdown summary and the HTML report', () => {
  it('show none of them: rendered from the report built of the redacted record', async () => {
    const { result, secrets } = await echoRun();
    const storyboard = { id: 'inline', title: 'Inline', file: '/virtual/inline.storyboard.yaml' };
    const report = buildReport(
      [
        {
          project: '',
          file: storyboard.file,
          name: 'echo',
          state: 'failed',
          errors: [],
          meta: {
            adcp: { id: 'inline/main/echo', status: 'failed', result: redactStepResult(result, secrets), storyboard },
          },
        },
      ],
      { root: '/virtual' },
    );
    for (const text of [
      renderMarkdownSummary(report, { root: '/virtual' }),
      renderHtmlReport(report, { root: '/virtual' }),
    ]) {
      expect(text).toContain('[redacted]');
      for (const secret of [TOKEN, KIT_KEY, EXPECTED_SECRET]) expect(text).not.toContain(secret);
    }
  });
});
