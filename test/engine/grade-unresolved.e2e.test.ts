/**
 * An expected value whose `$context` capture failed, on a real run against the fixture agent: the message names the
 * step that should have captured it and why that step failed (engine/run.ts hands gradeStep the earlier steps).
 */
import { describe, expect, inject, it } from 'vitest';
import { failureHeadline } from '../../src/report/format.js';
import { phasedStoryboard, runInline } from '../helpers/inline-run.js';

describe('an expected value whose capture failed, on a real run', () => {
  it('names the step that captures it and why it failed', async () => {
    const steps = await runInline(
      phasedStoryboard([
        {
          id: 'setup',
          steps: [
            {
              id: 'caps',
              task: 'get_adcp_capabilities',
              sample_request: { context: { correlation_id: 'c' } },
              context_outputs: [{ name: 'first_protocol', path: 'supported_protocols[0]' }],
              validations: [{ check: 'field_value', path: 'context.correlation_id', value: 'c' }],
            },
          ],
        },
        {
          id: 'use',
          steps: [
            {
              id: 'compare',
              task: 'get_adcp_capabilities',
              validations: [{ check: 'field_value', path: 'supported_protocols[0]', value: '$context.first_protocol' }],
            },
          ],
        },
      ]),
      `${inject('agentOrigin')}/x/wrong_value/mcp`,
    );
    const compare = steps.compare!.result;
    expect(compare.validations[0]).toMatchObject({
      check: 'field_value',
      passed: false,
      expected: ['$context.first_protocol'],
      actual: null,
      error:
        '$context.first_protocol in the expected value did not resolve: step "caps" (phase setup) failed (field_value at /context/correlation_id — field_value)',
    });
    expect(failureHeadline(compare, { cwd: '/' })).toContain(
      'placeholder $context.first_protocol in the expected value did not resolve: step "caps" (phase setup) failed',
    );
  });
});
