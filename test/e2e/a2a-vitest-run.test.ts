/**
 * A real `vitest run` with our plugin against the fixture agent's A2A
 * endpoint, chosen the way a CI job would: ADCP_AGENT_URL + ADCP_PROTOCOL=a2a.
 * The same tests as over MCP (test/e2e/vitest-run.test.ts), the same verdicts,
 * A2A records in the test meta.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { loadStoryboardFile } from '../../src/storyboard/load.js';
import { byId, repoRoot, runVitest, type VitestRun } from '../helpers/run-vitest.js';

const config = join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts');
const storyboardsDir = join(repoRoot, 'fixtures', 'storyboards');
const good = ['discovery', 'products', 'error-codes'].map((name) => join(storyboardsDir, `${name}.storyboard.yaml`));

function stepIds(file: string): string[] {
  const loaded = loadStoryboardFile(file);
  if (!loaded.ok) throw new Error(`fixture ${file} does not load`);
  return loaded.storyboard.phases.flatMap((phase) =>
    phase.steps.map((step) => `${loaded.storyboard.id}/${phase.id}/${step.id}`),
  );
}

describe('ADCP_PROTOCOL=a2a against the conformant A2A endpoint', () => {
  let run: VitestRun;
  beforeAll(async () => {
    run = await runVitest({
      config,
      env: {
        ADCP_AGENT_URL: `${inject('agentOrigin')}/a2a`,
        ADCP_PROTOCOL: 'a2a',
        E2E_STORYBOARDS: good.join(','),
        E2E_CORPUS: 'capability_discovery',
      },
    });
  });

  it('passes every step of the fixture storyboards and capability_discovery, as over MCP', () => {
    const ids = [
      ...good.flatMap(stepIds),
      'capability_discovery/protocol_discovery/get_capabilities',
      'capability_discovery/protocol_discovery/get_capabilities_filtered',
    ];
    for (const id of ids) {
      const test = byId(run, id);
      expect(test.state, `${test.fullName}\n${test.errors.map((e) => e.message).join('\n')}`).toBe('passed');
    }
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
  });

  it('records the A2A exchange in the test meta: the Task, its state, the DataPart extraction', () => {
    const { result } = byId(run, 'capability_discovery/protocol_discovery/get_capabilities').meta.adcp;
    expect(result).toMatchObject({
      passed: true,
      extraction: { path: 'structured_content', note: 'A2A task completed: artifacts[0].parts[] last DataPart' },
      request: { transport: 'a2a', operation: 'get_adcp_capabilities', url: `${inject('agentOrigin')}/a2a` },
      response: {
        transport: 'a2a',
        status: 200,
        task_state: 'completed',
        payload: { kind: 'task', status: { state: 'completed' } },
      },
    });
  });
});

describe('ADCP_PROTOCOL=a2a against a misbehaving A2A endpoint', () => {
  let run: VitestRun;
  beforeAll(async () => {
    run = await runVitest({
      config,
      env: {
        ADCP_AGENT_URL: `${inject('agentOrigin')}/x/wrong_value/a2a`,
        ADCP_PROTOCOL: 'a2a',
        E2E_FILES: 'fixtures/storyboards/discovery.storyboard.yaml',
      },
    });
  });

  it('fails the step with the same validation as over MCP, showing the DataPart it read', () => {
    const test = byId(run, 'fixture_discovery/capabilities/get_capabilities');
    expect(test.state).toBe('failed');
    // The headline is the error's message (JUnit's message=); the details travel in its diff, printed under it.
    const message = `${test.errors[0]!.message}\n${test.errors[0]!.diff}`;
    expect(message).toContain('pointer:  /context/correlation_id');
    expect(message).toMatch(/sent \(a2a get_adcp_capabilities/);
    expect(message).toContain('fixture_discovery--get_capabilities-mutated');
    // What the paths were read against: the DataPart, not the A2A Task around it.
    expect(message).not.toContain('"artifacts"');
    expect(test.meta.adcp.result.validations.find((v: any) => !v.passed)).toMatchObject({
      check: 'field_value',
      json_pointer: '/context/correlation_id',
      actual: 'fixture_discovery--get_capabilities-mutated',
    });
    expect(run.exitCode).toBe(1);
  });
});
