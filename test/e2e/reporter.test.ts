/**
 * The contract reporter in a real `vitest run`: one JSON with every step's
 * record, the run summary the contract requires, load errors — and nothing
 * secret in it.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { builtModule } from '../helpers/built.js';
import { assertValidContractReport } from '../helpers/contract-schema.js';
import { repoRoot, runVitest, type VitestRun } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `reporter-${process.pid}`);
const out = join(scratch, 'contract.json');
const junit = join(scratch, 'junit.xml');
const html = join(scratch, 'report.html');
const markdown = join(scratch, 'summary.md');
const jobSummary = join(scratch, 'github-step-summary.md');
const ndjson = join(scratch, 'contract.ndjson');
const secretToken = 'demo-reporter-secret-token-9f3b';
let run: VitestRun;
let report: any;

beforeAll(async () => {
  mkdirSync(scratch, { recursive: true });
  writeFileSync(
    join(scratch, 'leaky.storyboard.yaml'),
    [
      'id: leaky',
      'title: Leaky',
      'track: core',
      'phases:',
      '  - id: p',
      '    title: P',
      '    steps:',
      '      - id: echo',
      '        title: Echo secrets back',
      '        task: get_adcp_capabilities',
      '        sample_request:',
      // The agent echoes the context: the configured token comes back under a key no redaction pattern matches.
      // …and a </script> inside JSON, for the HTML report's escaping.
      `          context: { correlation_id: leaky, api_key: "kit-planted-key", nested: { Authorization: "Bearer planted" }, note: "${secretToken}", html: "</script><script>alert(1)</script>" }`,
      '        validations:',
      '          - check: response_schema',
      '          - check: field_value',
      '            path: context.correlation_id',
      '            value: "not-what-the-agent-says"',
      '',
    ].join('\n'),
  );
  writeFileSync(jobSummary, '# an earlier step\n');
  writeFileSync(
    join(scratch, 'placeholder.storyboard.yaml'),
    'id: placeholder\ntitle: Placeholder\nversion: "0.1.0"\ntrack: brand\nphases: []\n',
  );
  writeFileSync(
    join(scratch, 'broken.storyboard.yaml'),
    'id: broken\ntitle: Broken\nphases:\n  - id: p\n    steps:\n      - id: s\n',
  );
  run = await runVitest({
    config: join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts'),
    env: {
      ADCP_AGENT_URL: inject('agentUrl'),
      ADCP_AUTH_TOKEN: secretToken,
      GITHUB_STEP_SUMMARY: jobSummary,
      E2E_STORYBOARDS: [
        join(repoRoot, 'fixtures', 'storyboards', 'discovery.storyboard.yaml'),
        `${scratch}/*.storyboard.yaml`,
      ].join(','),
    },
    reporters: [await builtModule('vitest/reporter'), 'junit', 'github-actions'],
    args: [
      `--outputFile.vitest-adcp=${out}`,
      `--outputFile.junit=${junit}`,
      `--outputFile.vitest-adcp-html=${html}`,
      `--outputFile.vitest-adcp-markdown=${markdown}`,
      `--outputFile.vitest-adcp-ndjson=${ndjson}`,
    ],
  });
  report = JSON.parse(readFileSync(out, 'utf8'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('contract reporter', () => {
  it('writes one record per step with the contract fields, grouped by storyboard', () => {
    expect(report.contract).toEqual({ id: 'runner_output_contract', version: '1.1.0' });
    const ids = report.storyboards.map((s: any) => s.storyboard_id).sort();
    expect(ids).toEqual(['fixture_discovery', 'leaky', 'placeholder']);
    for (const storyboard of report.storyboards) {
      for (const step of storyboard.steps) {
        for (const field of [
          'storyboard_id',
          'phase_id',
          'step_id',
          'task',
          'passed',
          'duration_ms',
          'validations',
          'extraction',
        ])
          expect(step).toHaveProperty(field);
      }
    }
    const echo = report.storyboards.find((s: any) => s.storyboard_id === 'leaky').steps[0];
    expect(echo.passed).toBe(false);
    expect(echo.validations.find((v: any) => !v.passed)).toMatchObject({
      check: 'field_value',
      json_pointer: '/context/correlation_id',
      expected: 'not-what-the-agent-says',
      actual: 'leaky',
    });
  });

  it('summarises the run: steps, tracks, schemas used', () => {
    const steps = report.storyboards.flatMap((s: any) => s.steps);
    expect(report.summary).toMatchObject({
      total_steps: steps.length,
      steps_failed: 1,
      steps_passed: steps.length - 1,
      steps_skipped: 0,
    });
    expect(report.summary.tracks).toEqual(
      expect.arrayContaining([
        {
          track: 'core',
          project: 'vitest-adcp',
          agent_url: inject('agentUrl'),
          status: 'failed',
          storyboards: expect.arrayContaining([
            { storyboard_id: 'leaky', status: 'failed' },
            { storyboard_id: 'fixture_discovery', status: 'passed' },
          ]),
        },
        {
          track: 'brand',
          project: 'vitest-adcp',
          agent_url: inject('agentUrl'),
          status: 'skipped',
          storyboards: [{ storyboard_id: 'placeholder', status: 'skipped' }],
          skip_reasons: ['no_phases'],
        },
      ]),
    );
    expect(report.summary.schemas_used).toEqual(
      expect.arrayContaining([
        {
          schema_id: '/schemas/3.0.6/protocol/get-adcp-capabilities-response.json',
          schema_url: 'https://adcontextprotocol.org/schemas/3.0.6/protocol/get-adcp-capabilities-response.json',
        },
      ]),
    );
  });

  it('reports a storyboard without phases as skipped with no_phases, citing id and version', () => {
    const placeholder = report.storyboards.find((s: any) => s.storyboard_id === 'placeholder');
    expect(placeholder).toMatchObject({
      status: 'skipped',
      steps: [],
      skip: { reason: 'no_phases', detail: 'storyboard placeholder version 0.1.0 has no phases to run' },
    });
    expect(run.tests.find((t) => t.module.endsWith('placeholder.storyboard.yaml'))).toMatchObject({
      state: 'skipped',
      note: 'no_phases: storyboard placeholder version 0.1.0 has no phases to run',
    });
  });

  it('lists storyboard files that did not load', () => {
    expect(report.load_errors).toEqual([
      expect.objectContaining({
        file: expect.stringMatching(/broken\.storyboard\.yaml$/),
        message: expect.stringMatching(/\[schema\]/),
      }),
    ]);
  });

  it('leaks no secret: redacted keys, allowlisted headers, no token anywhere', () => {
    const text = readFileSync(out, 'utf8');
    expect(text).not.toContain(secretToken);
    expect(text).not.toContain('kit-planted-key');
    expect(text).not.toContain('Bearer planted');
    const echo = report.storyboards.find((s: any) => s.storyboard_id === 'leaky').steps[0];
    expect(echo.request.payload.context.api_key).toBe('[redacted]');
    expect(echo.response.payload.structuredContent.context.nested.Authorization).toBe('[redacted]');
    expect(JSON.parse(echo.response.payload.content[0].text).context.api_key).toBe('[redacted]');
    // The token the agent echoed is scrubbed from the record, the test meta and the failure shown.
    expect(echo.request.payload.context.note).toBe('[redacted]');
    expect(echo.response.payload.structuredContent.context.note).toBe('[redacted]');
    const failing = run.tests.find((t) => t.module.endsWith('leaky.storyboard.yaml'))!;
    expect(failing.state).toBe('failed');
    // The details (what was received) travel in the error's diff (the message is the headline).
    expect(failing.errors[0]!.diff).toMatch(/"note": "\[redacted\]"/);
    expect(JSON.stringify([failing.errors, failing.meta])).not.toContain(secretToken);
    for (const step of report.storyboards.flatMap((s: any) => s.steps)) {
      for (const name of Object.keys(step.response?.headers ?? {})) {
        expect([
          'content-type',
          'content-length',
          'content-encoding',
          'www-authenticate',
          'location',
          'retry-after',
          'x-request-id',
          'x-correlation-id',
        ]).toContain(name);
      }
    }
    // The terminal output too, and every other file the run wrote.
    for (const [what, text] of [
      ['terminal', run.stdout + run.stderr],
      ['JUnit', readFileSync(junit, 'utf8')],
      ['markdown', readFileSync(markdown, 'utf8')],
      ['job summary', readFileSync(jobSummary, 'utf8')],
      ['HTML', readFileSync(html, 'utf8')],
    ]) {
      for (const secret of [secretToken, 'kit-planted-key', 'Bearer planted'])
        expect(text, `${secret} in ${what}`).not.toContain(secret);
    }
  });
});

describe('CI outputs', () => {
  const headline =
    /^field_value at \/context\/correlation_id: expected "not-what-the-agent-says", got "leaky" — \.vitest-adcp\/reporter-\d+\/leaky\.storyboard\.yaml:15:13$/;
  const unxml = (text: string) =>
    text
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&');

  it("JUnit's failure message= is the one-line headline; the details are in the failure's body", () => {
    const xml = readFileSync(junit, 'utf8');
    const failure = xml.match(
      /<testcase [^>]*name="[^"]*Echo secrets back \(echo\)"[^>]*>(?:(?!<\/testcase>)[\s\S])*?<failure message="([^"]*)" type="StoryboardStepError">([\s\S]*?)<\/failure>/,
    );
    expect(failure, xml).not.toBeNull();
    expect(unxml(failure![1]!)).toMatch(headline);
    const body = unxml(failure![2]!);
    expect(body).toContain('1 of 4 validations failed in step "echo" (task get_adcp_capabilities):');
    expect(body).toMatch(/received \(structured_content HTTP 200, \d+ ms\), around \/context\/correlation_id:/);
    // The YAML frames stay: the failing validation's line, then the step's.
    expect(body).toMatch(/❯ field_value \.vitest-adcp\/reporter-\d+\/leaky\.storyboard\.yaml:15:13/);
    // A file that does not load: its first error on one line, all of them (with their fixes) in the body and the report.
    const broken = xml.match(
      /<testcase [^>]*name="[^"]*loads without errors \(schema\)"[^>]*>(?:(?!<\/testcase>)[\s\S])*?<failure message="([^"]*)" type="StoryboardStepError">([\s\S]*?)<\/failure>/,
    );
    expect(broken, xml).not.toBeNull();
    expect(unxml(broken![1]!)).toMatch(
      /^storyboard does not load: \/\S+\/broken\.storyboard\.yaml:\d+:\d+: \[schema\] [^\n]+$/,
    );
    expect(unxml(broken![2]!)).toMatch(/\n {4}fix: /);
    expect(report.load_errors[0].message).toMatch(
      /^storyboard does not load: [^\n]+\n\/\S+broken\.storyboard\.yaml:\d+:\d+: \[schema\] [\s\S]*\n {4}fix: /,
    );
  });

  it("the github-actions annotation points at the failing validation's YAML line, headline first, details after", () => {
    const leaky = join(scratch, 'leaky.storyboard.yaml');
    const annotation = (run.stdout + run.stderr).split('\n').find((line) => line.startsWith(`::error file=${leaky},`))!;
    expect(annotation).toBeDefined();
    expect(annotation).toMatch(
      /,line=15,column=13::StoryboardStepError: field_value at \/context\/correlation_id: expected "not-what-the-agent-says", got "leaky" — [^%]*%0A%0A1 of 4 validations failed in step "echo"/,
    );
  });

  it('the thrown error carries the headline as message and the details in diff, which the terminal prints right under it', () => {
    const failing = run.tests.find((t) => t.module.endsWith('leaky.storyboard.yaml'))!;
    expect(failing.errors[0]!.message).toMatch(headline);
    expect(failing.errors[0]!.diff).toMatch(/^1 of 4 validations failed in step "echo"/);
    const lines = (run.stdout + run.stderr).split('\n');
    const at = lines.findIndex((line) =>
      line.startsWith('StoryboardStepError: field_value at /context/correlation_id'),
    );
    expect(at).toBeGreaterThan(-1);
    expect(lines.slice(at, at + 4).join('\n')).toMatch(
      /^StoryboardStepError: field_value at [^\n]*\n\n1 of 4 validations failed in step "echo" \(task get_adcp_capabilities\):\n {2}✗ /,
    );
  });

  it('writes the markdown summary, appends it to $GITHUB_STEP_SUMMARY, and says where each file went', () => {
    const md = readFileSync(markdown, 'utf8');
    expect(md).toMatch(/^## ❌ AdCP storyboards: \d+ passed, 1 failed, 0 skipped/);
    expect(md).toContain('| core | ❌ failed | 1 passed, 1 failed |');
    expect(md).toContain('| brand | ⏭️ skipped (no\\_phases) | 1 skipped |');
    expect(md).toMatch(/\*\*Leaky\*\* › p › echo \(`get_adcp_capabilities`\)/);
    // Appended after what was there (Vitest's github-actions reporter appends its own summary to the same file).
    const summary = readFileSync(jobSummary, 'utf8');
    expect(summary.startsWith('# an earlier step\n')).toBe(true);
    expect(summary).toContain(`\n${md}\n`);
    const printed = run.stdout + run.stderr;
    expect(printed).toMatch(/vitest-adcp: runner output contract report \(.*\) written to .*contract\.json/);
    expect(printed).toMatch(/vitest-adcp: markdown summary written to .*summary\.md/);
    expect(printed).toContain(`vitest-adcp: markdown summary appended to the GitHub job summary (${jobSummary})`);
    expect(printed).toMatch(/vitest-adcp: HTML report written to .*report\.html/);
  });

  it("writes the HTML report from the same records: the tree, the failing pointer marked, the agent's </script> escaped", () => {
    const page = readFileSync(html, 'utf8');
    for (const s of report.storyboards)
      expect(page).toContain(`<details class="sb" data-status="${s.status}" data-track="${s.track}"`);
    expect(page).toContain(
      '<mark class="fail" title="/context/correlation_id"><span class="j-string">&#34;leaky&#34;</span></mark>',
    );
    expect(page).toContain('&#34;&#60;/script&#62;&#60;script&#62;alert(1)&#60;/script&#62;&#34;');
    expect(page.match(/<\/?script/gi)).toEqual(['<script', '</script']);
  });
});

describe('the contract report as AdCP tooling reads it', () => {
  it('validates against schema/runner-output.schema.json', () => {
    assertValidContractReport(report);
  });

  it('says what it is a report of: agent, protocol, project, corpus version, tool version, start and end', () => {
    const version = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version;
    expect(report.run).toMatchObject({
      agent_url: inject('agentUrl'),
      protocol: 'mcp',
      project: 'vitest-adcp',
      corpus_version: '3.0.6',
      tool: { name: 'vitest-adcp', version },
      complete: true,
      test_name_pattern: null,
    });
    expect(report.run.targets).toEqual([
      { project: 'vitest-adcp', agent_url: inject('agentUrl'), protocol: 'mcp', corpus_version: '3.0.6' },
    ]);
    expect(Date.parse(report.run.started_at)).toBeLessThanOrEqual(Date.parse(report.run.finished_at));
    expect(report.run.duration_ms).toBe(Date.parse(report.run.finished_at) - Date.parse(report.run.started_at));
    for (const s of report.storyboards)
      expect(s).toMatchObject({ project: 'vitest-adcp', agent_url: inject('agentUrl'), protocol: 'mcp' });
  });

  it('streams the same records to the NDJSON file as the tests finish, redacted', () => {
    const text = readFileSync(ndjson, 'utf8');
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ type: 'run_start', contract: { id: 'runner_output_contract', version: '1.1.0' } });
    expect(lines.at(-1)).toEqual({ type: 'run_end', run: report.run, summary: report.summary });
    const key = (sb: string, step: any) => `${sb}/${step.phase_id}/${step.step_id}`;
    const streamed = lines
      .filter((l) => l.type === 'step')
      .map((l) => [key(l.storyboard_id, l.step), l.step.passed] as const);
    const reported = report.storyboards.flatMap((s: any) =>
      s.steps.map((step: any) => [key(s.storyboard_id, step), step.passed] as const),
    );
    expect(streamed.sort()).toEqual(reported.sort());
    expect(lines.filter((l) => l.type === 'storyboard_skip').map((l) => l.storyboard_id)).toEqual(['placeholder']);
    expect(lines.filter((l) => l.type === 'load_error').map((l) => l.file)).toEqual([
      expect.stringMatching(/broken\.storyboard\.yaml$/),
    ]);
    for (const secret of [secretToken, 'kit-planted-key', 'Bearer planted']) expect(text).not.toContain(secret);
  });
});

describe('two Vitest projects testing two agents, filtered with -t', () => {
  it('keeps each project × agent apart, reports the steps -t replayed as replayed, lists the steps it left out as not selected, and calls no storyboard passed on a subset', async () => {
    const two = join(scratch, 'two-agents.json');
    const good = inject('agentUrl');
    const wrong = `${inject('agentOrigin')}/x/wrong_value/mcp`;
    const r = await runVitest({
      config: join(repoRoot, 'test', 'e2e', 'two-agents.config.ts'),
      env: {
        E2E_AGENT_A: good,
        E2E_AGENT_B: wrong,
        E2E_STORYBOARDS: join(repoRoot, 'fixtures', 'storyboards', 'discovery.storyboard.yaml'),
      },
      reporters: [await builtModule('vitest/reporter')],
      args: ['-t', 'list_display_formats', `--outputFile.vitest-adcp=${two}`],
    });
    expect(r.exitCode, r.stdout + r.stderr).toBe(1);
    const report = JSON.parse(readFileSync(two, 'utf8'));
    assertValidContractReport(report);
    const verdicts = (s: any) =>
      s.steps.map((step: any) => `${step.step_id}:${step.not_run ? 'not_run' : step.passed ? 'passed' : 'failed'}`);
    expect(
      report.storyboards.map((s: any) => [s.project, s.agent_url, s.storyboard_id, s.status, verdicts(s)]),
    ).toEqual([
      // get_capabilities ran only to set up list_display_formats (its captures): replayed, not graded, its outcome
      // said; the two paging steps the filter left out are not steps of the report.
      [
        'vitest-adcp:agent-a',
        good,
        'fixture_discovery',
        'incomplete',
        ['get_capabilities:not_run', 'list_display_formats:passed'],
      ],
      [
        'vitest-adcp:agent-b',
        wrong,
        'fixture_discovery',
        'failed',
        ['get_capabilities:not_run', 'list_display_formats:failed'],
      ],
    ]);
    expect(report.storyboards[0].steps[0].not_run).toEqual({
      reason: 'replayed',
      detail:
        'replayed, not graded: its own test was filtered out (-t "list_display_formats") and a selected step depends on it; it passed',
    });
    expect(report.storyboards[1].steps[0].not_run.detail).toMatch(/; it failed: /);
    expect(report.summary).toMatchObject({ total_steps: 2, steps_passed: 1, steps_failed: 1, steps_not_run: 2 });
    // The steps the filter left out: listed as not selected where the contract has the field (2.6.0; the installed
    // SDK's corpus decides), nowhere in a 1.1.0 report.
    if (report.contract.version === '2.6.0')
      expect(
        report.summary.not_selected.map((n: any) => [n.project, n.step_id, n.reason, n.step_count, n.detail]),
      ).toEqual(
        ['vitest-adcp:agent-a', 'vitest-adcp:agent-b'].flatMap((project) =>
          ['list_formats_first_page', 'list_formats_second_page'].map((step) => [
            project,
            step,
            'explicit_scope_excluded',
            1,
            'outside the selected scope: the run was filtered by test name (-t "list_display_formats")',
          ]),
        ),
      );
    expect(report.summary.tracks.map((t: any) => [t.project, t.track, t.status])).toEqual([
      ['vitest-adcp:agent-a', 'core', 'incomplete'],
      ['vitest-adcp:agent-b', 'core', 'failed'],
    ]);
    expect(report.run).toMatchObject({
      agent_url: null,
      project: null,
      complete: false,
      test_name_pattern: 'list_display_formats',
    });
    expect(report.run.targets.map((t: any) => [t.project, t.agent_url])).toEqual([
      ['vitest-adcp:agent-a', good],
      ['vitest-adcp:agent-b', wrong],
    ]);
  });
});

describe('sharded runs', () => {
  it("merges the shards' blob reports into one contract report (vitest --shard + --merge-reports)", async () => {
    const blobs = join(scratch, 'blobs');
    const merged = join(scratch, 'merged.json');
    const config = join(repoRoot, 'test', 'e2e', 'vitest.e2e.config.ts');
    const env = {
      ADCP_AGENT_URL: inject('agentUrl'),
      E2E_STORYBOARDS: join(repoRoot, 'fixtures', 'storyboards', '*.storyboard.yaml'),
      E2E_CORPUS: 'capability_discovery',
    };
    for (const shard of ['1/2', '2/2']) {
      const r = await runVitest({
        config,
        env,
        reporters: ['blob'],
        args: [`--shard=${shard}`, `--outputFile.blob=${join(blobs, `${shard.replace('/', '-')}.json`)}`],
      });
      expect(r.exitCode, r.stdout + r.stderr).toBe(0);
      expect(r.tests.length).toBeGreaterThan(0);
    }
    const r = await runVitest({
      config,
      env: { E2E_STORYBOARDS: env.E2E_STORYBOARDS },
      reporters: [await builtModule('vitest/reporter')],
      args: [`--merge-reports=${blobs}`, `--outputFile.vitest-adcp=${merged}`],
    });
    expect(r.exitCode, r.stdout + r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(merged, 'utf8'));
    assertValidContractReport(report);
    expect(report.storyboards.map((s: any) => s.storyboard_id).sort()).toEqual([
      'capability_discovery',
      'fixture_auth',
      'fixture_discovery',
      'fixture_error_codes',
      'fixture_products',
    ]);
    expect(report.summary.total_steps).toBe(r.tests.length);
    expect(report.summary.steps_failed).toBe(0);
  });
});
