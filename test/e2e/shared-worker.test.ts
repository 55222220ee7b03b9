/**
 * Storyboard files run in a Vitest project of their own without per-file
 * isolation (src/plugin/projects.ts > storyboardProject) — the speed of the
 * default configuration depends on it — and nothing of one storyboard reaches
 * another that runs beside it or after it in the same process (the run host's,
 * src/plugin/run-host.ts, with several in flight at once; one after another with
 * `concurrency: 1`): captures, the storyboard context, credentials from its test
 * kit — though they take turns on the process's MCP sessions (one per credential
 * and storyboard in flight, counted at a proxy).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { countingProxy } from '../helpers/counting-proxy.js';
import { repoRoot, runVitest } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `shared-worker-${process.pid}`);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const config = join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts');

describe('storyboards sharing a worker', () => {
  it.each([
    // One after another: A's kit token once; no credential for B, which the agent's HTTP 401 to B's last step drops
    // (no MCP result: dropped, as after any transport-level failure), and once more for C, whose session D then takes.
    { concurrency: 1, sessions: { 'Bearer demo-fixture-brand-v1': 1, none: 2 } },
    // All four at once (the default concurrency): a session each — two runs never share one at once.
    { concurrency: undefined, sessions: { 'Bearer demo-fixture-brand-v1': 1, none: 3 } },
  ])(
    'run un-isolated in the vitest-adcp project, and see nothing of each other (concurrency $concurrency)',
    async ({ concurrency, sessions }) => {
      mkdirSync(scratch, { recursive: true });
      // a-… sorts first: with one worker it runs first, captures, and authenticates with its own kit token.
      writeFileSync(
        join(scratch, 'a-captures.storyboard.yaml'),
        [
          'id: captures',
          'title: Captures',
          'context: { root_value: from-a }',
          'prerequisites: { test_kit: ../../fixtures/test-kits/fixture-brand.yaml }',
          'phases:',
          '  - id: p',
          '    steps:',
          '      - id: discover',
          '        task: get_products',
          '        sample_request: { buying_mode: wholesale }',
          '        context_outputs: [{ name: product_id, path: "products[0].product_id" }]',
          '        validations: [{ check: field_present, path: products }]',
          '',
        ].join('\n'),
      );
      writeFileSync(
        join(scratch, 'b-consumes.storyboard.yaml'),
        [
          'id: consumes',
          'title: Consumes',
          'phases:',
          '  - id: p',
          '    steps:',
          '      - id: uses_capture',
          '        task: get_products',
          '        sample_request: { buying_mode: refine, refine: [{ scope: product, product_id: "$context.product_id", action: include }] }',
          '      - id: uses_root_context',
          '        task: get_adcp_capabilities',
          '        sample_request: { context: { v: "$context.root_value" } }',
          // No test kit here: A's credentials must not carry over (the agent wants them for get_products).
          '      - id: no_credentials_of_a',
          '        task: get_products',
          '        sample_request: { buying_mode: wholesale }',
          '        expect_error: true',
          '        validations: [{ check: error_code, value: AUTH_REQUIRED }]',
          '',
        ].join('\n'),
      );
      // c-… and d-… run last, with no credential either.
      for (const name of ['c', 'd']) {
        writeFileSync(
          join(scratch, `${name}-again.storyboard.yaml`),
          [
            `id: again_${name}`,
            'title: Again',
            'phases:',
            '  - id: p',
            '    steps:',
            `      - id: capabilities_${name}`,
            '        task: get_adcp_capabilities',
            '',
          ].join('\n'),
        );
      }
      // B reads what A captured and what A's context: sets, which the load-time pass (unknown_context_reference) refuses
      // by default: with strictKeys: false it is a warning, and the steps meet it at run time, as this test needs.
      const lenientConfig = join(scratch, `vitest-${concurrency ?? 'default'}.config.ts`);
      writeFileSync(
        lenientConfig,
        [
          "import { defineConfig } from 'vitest/config';",
          `import { adcpStoryboards } from ${JSON.stringify(join(repoRoot, 'test', 'e2e', 'plugin-under-test.ts'))};`,
          `export default defineConfig({ root: ${JSON.stringify(repoRoot)}, plugins: [adcpStoryboards({ include: [${JSON.stringify(`${scratch}/*.storyboard.yaml`)}], timeoutMs: 5_000, strictKeys: false${concurrency ? `, concurrency: ${concurrency}` : ''} })], test: { include: [], passWithNoTests: true } });`,
          '',
        ].join('\n'),
      );
      const proxy = await countingProxy(inject('agentUrl'));
      const run = await runVitest({
        config: lenientConfig,
        env: { ADCP_AGENT_URL: proxy.url },
        args: ['--maxWorkers=1'],
      }).finally(() => proxy.close());
      expect(
        run.tests.length,
        JSON.stringify(run.tests.map((t) => [t.name, t.state, t.errors[0]?.message.slice(0, 300)])),
      ).toBe(6);
      // The storyboards take turns on the process's MCP sessions, one per credential and storyboard in flight (above). One
      // more without a credential is the agent preflight's (agent-preflight.ts), in Vitest's main process before any
      // storyboard runs: the run has no token configured, so it opens the door with none (its session is its own, never
      // pooled).
      const initialized = Object.fromEntries(proxy.counts('initialize'));
      expect(initialized).toEqual({ ...sessions, none: sessions.none + 1 });
      for (const test of run.tests) expect(test.project).toMatchObject({ name: 'vitest-adcp', isolate: false });
      const verdict = (step: string) => run.tests.find((t) => t.meta.adcp?.result.step_id === step)!;
      expect(verdict('discover').state).toBe('passed');
      expect(verdict('no_credentials_of_a').state).toBe('passed');
      expect(verdict('capabilities_c').state).toBe('passed');
      expect(verdict('capabilities_d').state).toBe('passed');
      for (const step of ['uses_capture', 'uses_root_context']) {
        const test = verdict(step);
        expect([step, test.state]).toEqual([step, 'failed']);
        expect(test.meta.adcp.result.validations[0]).toMatchObject({ check: 'unresolved_substitution' });
      }
    },
  );

  it("run with Vitest's own worker count beside the user's tests (the run host runs the steps), or the count the run names", async () => {
    // With the user's own TS tests too: one group, one worker count (Vitest's default: one on 2 cores).
    const env = {
      ADCP_AGENT_URL: inject('agentUrl'),
      E2E_FILES: 'fixtures/storyboards/discovery.storyboard.yaml',
      E2E_TS_TESTS: '1',
    };
    const [byDefault, named] = await Promise.all([
      runVitest({ config, env }),
      runVitest({ config, env, args: ['--maxWorkers=1'] }),
    ]);
    expect(byDefault.exitCode, byDefault.stderr).toBe(0);
    const storyboards = (run: typeof byDefault) => run.tests.filter((t) => t.project.name === 'vitest-adcp');
    const own = (run: typeof byDefault) => run.tests.filter((t) => t.project.name === '');
    expect(storyboards(byDefault).length).toBeGreaterThan(0);
    expect(own(byDefault).length).toBeGreaterThan(0);
    // No worker count and no group of the plugin's own: the user's group, the run's count.
    for (const test of [...storyboards(byDefault), ...storyboards(named)])
      expect([test.project.groupOrder, test.project.maxWorkers]).toEqual([0, undefined]);
    expect(own(named).map((t) => t.project.maxWorkers)).toContain(1);
    // The same verdicts (in whichever order the files finished).
    const verdicts = (run: typeof byDefault) => run.tests.map((t) => `${t.name} ${t.state}`).sort();
    expect(verdicts(named)).toEqual(verdicts(byDefault));
  });

  it("run isolated in the user's own project with isolate: true", async () => {
    const run = await runVitest({
      config,
      env: {
        ADCP_AGENT_URL: inject('agentUrl'),
        E2E_FILES: 'fixtures/storyboards/discovery.storyboard.yaml',
        E2E_ISOLATE: '1',
      },
    });
    expect(run.tests.length).toBeGreaterThan(0);
    for (const test of run.tests) expect(test.project).toMatchObject({ name: '', isolate: true });
  });
});
