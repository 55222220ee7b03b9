/**
 * The markdown summary (src/report/markdown.ts) and the HTML report
 * (src/report/html.ts): pure renderings of the contract report object, here
 * built by the reporter's own buildContractReport from real engine runs
 * against the fixture agent (recorded once, by the first test that asks). The
 * agent echoes the request's context, so a `</script>` planted there comes
 * back in the response the views render. The child-Vitest path (files
 * written, paths printed, $GITHUB_STEP_SUMMARY) is in test/e2e/reporter.test.ts.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import type { TestModule, Vitest } from 'vitest/node';
import type { StepResult } from '../../src/model/records.js';
import { renderHtmlReport } from '../../src/report/html.js';
import { renderMarkdownSummary } from '../../src/report/markdown.js';
import { buildReport, type ReportTest } from '../../src/report/build.js';
import { buildEnvelope } from '../../src/report/envelope.js';
import AdcpReporter, { type ContractReport } from '../../src/vitest/reporter.js';
import {
  capsStep as caps,
  contractReport,
  gatedPhase as gated,
  loadFailureModule,
  REPORT_ROOT,
  storyboardModule,
  useFixtureAgent,
} from '../helpers/contract-report.js';

const agent = useFixtureAgent();

const SCRIPT_PAYLOAD = '</script><script>alert("agent")</script><img src=x onerror=alert(1)>';
const SECRET = 'views-configured-secret-77c1';
/**
 * Debian's `chromium` package. The browser test is skipped where it is not installed, except where a browser is
 * required (`.ci/run` sets ADCP_REQUIRE_BROWSER after installing one): there a missing browser fails the test.
 */
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const BROWSER_REQUIRED = process.env.ADCP_REQUIRE_BROWSER === '1';

const outcomes = agent.outcomes;

let ran: Promise<TestModule[]> | undefined;
async function report(): Promise<ContractReport> {
  ran ??= (async () => {
    const discovery = await outcomes([
      {
        id: 'caps',
        steps: [
          caps('ok'),
          caps('echo', {
            sample_request: {
              context: { correlation_id: 'sent', note: SCRIPT_PAYLOAD, api_key: 'planted-kit-key', token_note: SECRET },
            },
            validations: [
              { check: 'field_present', path: 'adcp' },
              {
                check: 'field_value',
                path: 'context.correlation_id',
                value: 'not-sent',
                description: 'correlation_id echoed',
              },
              { check: 'field_present', path: 'context.missing_field', description: 'a field the agent never sends' },
            ],
          }),
        ],
      },
      gated(caps('gated_a')),
    ]);
    const signals = await outcomes([gated(caps('only'))]);
    return [
      storyboardModule(
        {
          id: 'discovery',
          title: 'Discovery *with* [markdown] | pipes',
          track: 'core',
          version: '1.0.0',
          agent_url: agent.url(),
          protocol: 'mcp',
        },
        discovery,
        [SECRET],
      ),
      storyboardModule(
        { id: 'signals', title: 'Signals', track: 'signals', agent_url: agent.url(), protocol: 'mcp' },
        signals,
      ),
      loadFailureModule(
        'broken.storyboard.yaml',
        'schema',
        'storyboard does not load:\nbroken.storyboard.yaml:3:5: [schema] phases[0] must have title',
      ),
    ];
  })();
  return contractReport(await ran);
}

/** Random fence nonces and the run's time, made stable. */
function stable(text: string): string {
  return text
    .replace(/<<([a-z ]+?) [0-9a-f]{12}>>/g, '<<$1 #>>')
    .replace(/<<end [0-9a-f]{12}>>/g, '<<end #>>')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, '<time>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>');
}

describe('markdown summary', () => {
  it('renders the verdict, per-track and per-storyboard status, the failed steps with their YAML lines, and load errors', async () => {
    const md = renderMarkdownSummary(await report(), { root: REPORT_ROOT });
    expect(stable(md)).toMatchSnapshot();
  });

  it('keeps agent text inside code blocks only: no HTML, link or image of the agent reaches the rendered summary', async () => {
    const md = renderMarkdownSummary(await report(), { root: REPORT_ROOT });
    // Outside fenced blocks and code spans there is no `<` at all (titles are escaped, the agent's text is not there).
    const outside = md.replace(/^(`{3,})text\n[\s\S]*?\n\1$/gm, '').replace(/(`+)[^`]*?\1/g, '');
    expect(outside).not.toMatch(/<(?!\\)/);
    expect(md).not.toContain(SECRET);
    expect(md).not.toContain('planted-kit-key');
  });

  it('escapes storyboard text, and no backtick run in a value can close its code block or span', () => {
    const hostile = synthetic({
      title: 'T `x` ```` <b>',
      stepId: 'st',
      error: 'boom ```` then [a](http://evil) ![i](http://evil/i.png)',
    });
    const md = renderMarkdownSummary(hostile, { root: '/r' });
    expect(md).toContain('| T \\`x\\` \\`\\`\\`\\` \\<b\\> `sb` |');
    // The error's 4 backticks sit inside a 5-backtick fence.
    expect(md).toMatch(
      /^`````text\nstep "st" \(task t\) failed: <<error [0-9a-f]{12}>> boom ```` then \[a\]\(http:\/\/evil\)/m,
    );
    expect(md).toMatch(/^`````$/m);
  });

  it('lists at most maxFailures failed steps and counts the rest', () => {
    const many = synthetic({ title: 'Many', stepId: 'st', error: 'boom', copies: 5 });
    const md = renderMarkdownSummary(many, { root: '/r', maxFailures: 2 });
    expect(md.match(/^\*\*Many\*\* › p › st/gm)).toHaveLength(2);
    expect(md).toContain('… and 3 more failed steps: see the contract report.');
  });
});

describe('HTML report', () => {
  it('is one self-contained page: no external asset, and a CSP that lets only its own style and script run', async () => {
    const page = renderHtmlReport(await report(), { root: REPORT_ROOT });
    expect(page.startsWith('<!doctype html>')).toBe(true);
    // No tag with a URL attribute (the agent's `<img src=…>` below is text: its `<` is escaped).
    expect(page).not.toMatch(/<[a-z][^>]*\s(src|href|action|srcset|poster|data)=/i);
    expect(page).not.toMatch(/url\(/);
    const csp = page.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/)![1]!;
    expect(csp).toMatch(/^default-src 'none';/);
    const style = page.match(/<style>([\s\S]*?)<\/style>/)![1]!;
    const script = page.match(/<script>([\s\S]*?)<\/script>/)![1]!;
    const hash = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
    expect(csp).toContain(`style-src ${hash(style)};`);
    expect(csp).toContain(`script-src ${hash(script)};`);
  });

  it('escapes agent text: a </script> in the echoed JSON stays text, and the page has exactly its own one script', async () => {
    const page = renderHtmlReport(await report(), { root: REPORT_ROOT });
    expect(page.match(/<script/gi)).toHaveLength(1);
    expect(page.match(/<\/script/gi)).toHaveLength(1);
    expect(page).not.toContain('<img');
    expect(page).toContain(
      '<span class="j-string">&#34;&#60;/script&#62;&#60;script&#62;alert(\\&#34;agent\\&#34;)&#60;/script&#62;&#60;img src=x onerror=alert(1)&#62;&#34;</span>',
    );
    expect(page).not.toContain(SECRET);
    expect(page).not.toContain('planted-kit-key');
  });

  it('shows the storyboard › phase › step tree with each status, failed branches open, with track data for the filter', async () => {
    const page = renderHtmlReport(await report(), { root: REPORT_ROOT });
    const tree = [
      ...page.matchAll(
        /<details class="(sb|phase|step)" data-status="(\w+)"(?: data-track="(\w+)")?( open)?>\n<summary>[\s\S]*?<b>([^<]*)<\/b>/g,
      ),
    ].map(
      ([, kind, status, track, open, name]) =>
        `${kind === 'sb' ? '' : kind === 'phase' ? '  ' : '    '}${kind} ${name} ${status}${track ? ` [${track}]` : ''}${open ? ' open' : ''}`,
    );
    expect(tree).toEqual([
      'sb Discovery *with* [markdown] | pipes failed [core] open',
      '  phase caps failed open',
      '    step ok passed',
      '    step echo failed open',
      '  phase gated skipped',
      '    step gated_a skipped',
      'sb Signals skipped [signals]',
      '  phase gated skipped',
      '    step only skipped',
    ]);
    expect(page).toContain('<option value="core">core</option><option value="signals">signals</option>');
    expect(page).toContain('<div class="skip">not_applicable: phase &#34;gated&#34; skipped');
    expect(page).toMatch(
      /<div class="loaderr"><code>broken.storyboard.yaml<\/code><pre class="reason">storyboard does not load:\nbroken.storyboard.yaml:3:5: \[schema\]/,
    );
  });

  it("shows a failed step's request, response with the failing pointers highlighted, validations and YAML lines", async () => {
    const r = await report();
    const page = renderHtmlReport(r, { root: REPORT_ROOT });
    const echo = page.slice(page.indexOf('<b>echo</b>'), page.indexOf('phase <b>gated</b>'));
    expect(stable(echo.match(/<div class="headline">([^<]*)<\/div>/)![1]!)).toBe(
      'field_value at /context/correlation_id: expected &#34;not-sent&#34;, got &#34;sent&#34; — inline.storyboard.yaml:17:13 (+1 more failed check)',
    );
    // The value at the failing pointer, marked; the missing field's deepest existing parent, marked as near.
    expect(echo).toContain(
      '<mark class="fail" title="/context/correlation_id"><span class="j-string">&#34;sent&#34;</span></mark>',
    );
    expect(echo).toMatch(/<span class="j-key">&#34;context&#34;<\/span>: <mark class="near" title="\/context">\{\n/);
    const rows = [...echo.matchAll(/<tr class="(ok|ko)">([\s\S]*?)<\/tr>/g)].map(
      ([, cls, row]) =>
        `${cls} ${row
          .replace(/<[^>]+>/g, ' ')
          .replace(/\s+/g, ' ')
          .trim()}`,
    );
    expect(rows).toEqual([
      'ok ✓ field_present field_present /adcp inline.storyboard.yaml:15:13',
      'ko ✗ field_value correlation_id echoed /context/correlation_id &#34;not-sent&#34; &#34;sent&#34; inline.storyboard.yaml:17:13 &#34;context.correlation_id&#34; does not have the expected value',
      'ko ✗ field_present a field the agent never sends /context/missing_field &#34;context.missing_field&#34; null inline.storyboard.yaml:21:13 &#34;context.missing_field&#34; is missing from the response',
      'ok ✓ invariant context.echo: the answer echoes the request context verbatim and never invents one /context inline.storyboard.yaml:12:9',
      'ok ✓ invariant context.no_secret_echo: the answer carries no credential of the run and no credential-named field inline.storyboard.yaml:12:9',
    ]);
    expect(echo).toMatch(
      /<details class="request"><summary><b>Request<\/b> <span class="muted">mcp get_adcp_capabilities → http:\/\/127\.0\.0\.1:\d+\/mcp<\/span><\/summary><pre class="json">\{/,
    );
    expect(echo).toMatch(/<h4>Response <span class="muted">structured_content · HTTP 200 · \d+ ms<\/span><\/h4>/);
    // Redacted as in the JSON report.
    expect(echo).toContain(
      '<span class="j-key">&#34;api_key&#34;</span>: <span class="j-string">&#34;[redacted]&#34;</span>',
    );
  });

  // In a real browser: the CSP lets the page's own script run (hash), and the filters (here from the URL hash) hide what they should.
  it.skipIf(!existsSync(CHROMIUM) && !BROWSER_REQUIRED)(
    'runs its filter script under its own CSP in headless Chromium (#failed&track=core)',
    async () => {
      expect(existsSync(CHROMIUM), `no browser at ${CHROMIUM} (install Debian's chromium or set CHROMIUM)`).toBe(true);
      const dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-html-'));
      try {
        const file = join(dir, 'report.html');
        writeFileSync(file, renderHtmlReport(await report(), { root: REPORT_ROOT }));
        const dom = await new Promise<string>((done, fail) =>
          execFile(
            CHROMIUM,
            [
              '--headless',
              '--no-sandbox',
              '--disable-gpu',
              '--dump-dom',
              `${pathToFileURL(file).href}#failed&track=core`,
            ],
            { timeout: 30_000 },
            (error, stdout) => (error ? fail(error) : done(stdout)),
          ),
        );
        expect(dom).toMatch(/<html lang="en" data-ready="true">/);
        const shown = (kind: string) =>
          [...dom.matchAll(new RegExp(`<details class="${kind}"[^>]*>`, 'g'))]
            .filter(([tag]) => !/ hidden=/.test(tag))
            .map(([tag]) => tag.match(/data-status="(\w+)"/)![1]);
        expect(shown('step')).toEqual(['failed']);
        expect(shown('phase')).toEqual(['failed']);
        expect(shown('sb')).toEqual(['failed']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('redacts again on its own: a record that skipped the reporter keeps no secret-named value', () => {
    const raw = synthetic({
      title: 'Raw',
      stepId: 'st',
      error: 'boom',
      request: { authorization: 'Bearer raw-secret-value', nested: { client_secret: 'raw-client-secret' } },
    });
    const page = renderHtmlReport(raw, { root: '/r' });
    expect(page).not.toContain('raw-secret-value');
    expect(page).not.toContain('raw-client-secret');
    expect(page).toContain('&#34;[redacted]&#34;');
  });
});

describe('the reporter writes the views', () => {
  const vitestAt = (root: string, logged: string[], outputFile?: unknown) =>
    ({ config: { root, outputFile }, logger: { log: (m: string) => logged.push(m) } }) as unknown as Vitest;

  it('writes the markdown and the HTML where asked (options or outputFile keys), says where, and appends to the job summary', async () => {
    await report();
    const modules = await ran!;
    const root = mkdtempSync(join(tmpdir(), 'adcp-views-'));
    const summary = join(root, 'step-summary.md');
    writeFileSync(summary, 'before\n');
    vi.stubEnv('GITHUB_STEP_SUMMARY', summary);
    try {
      const logged: string[] = [];
      const reporter = new AdcpReporter({ markdownFile: 'out/summary.md' });
      reporter.onInit(
        vitestAt(root, logged, { 'vitest-adcp': 'out/r.json', 'vitest-adcp-html': 'out/deep/report.html' }),
      );
      reporter.onTestRunEnd(modules);
      const md = readFileSync(join(root, 'out/summary.md'), 'utf8');
      expect(md).toMatch(/^## ❌ AdCP storyboards/);
      expect(readFileSync(summary, 'utf8')).toBe(`before\n${md}\n`);
      expect(readFileSync(join(root, 'out/deep/report.html'), 'utf8')).toMatch(/^<!doctype html>/);
      // First the terminal summary (report/summary.ts), then the JSON's line, then the views'.
      expect(logged[0]).toMatch(/^\nvitest-adcp: 2 storyboards, 4 steps: 1 passed, 1 failed, 2 skipped\n {2}✗ core /);
      expect(logged.slice(2)).toEqual([
        `vitest-adcp: markdown summary written to ${relative(process.cwd(), join(root, 'out/summary.md'))}`,
        `vitest-adcp: markdown summary appended to the GitHub job summary (${summary})`,
        `vitest-adcp: HTML report written to ${relative(process.cwd(), join(root, 'out/deep/report.html'))}`,
      ]);

      // jobSummary: false, and no markdown or HTML asked for: nothing but the JSON.
      const quiet: string[] = [];
      const off = new AdcpReporter({ jobSummary: false });
      off.onInit(vitestAt(root, quiet));
      off.onTestRunEnd(modules);
      expect(quiet).toHaveLength(1); // the summary of this run end was printed already (claimSummary)
      expect(readFileSync(summary, 'utf8')).toBe(`before\n${md}\n`);

      // A job summary that cannot be written is said, not thrown: the reports are written all the same.
      vi.stubEnv('GITHUB_STEP_SUMMARY', root);
      const unwritable: string[] = [];
      const third = new AdcpReporter({ htmlFile: 'again.html' });
      third.onInit(vitestAt(root, unwritable));
      third.onTestRunEnd(modules);
      expect(unwritable[1]).toMatch(/^vitest-adcp: could not append to the GitHub job summary \(.*\): EISDIR/);
      expect(unwritable[2]).toMatch(/HTML report written to .*again\.html$/);
    } finally {
      vi.unstubAllEnvs();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('a run over two agents, filtered', () => {
  /**
   * Two projects testing two agents, each one step graded, one replayed to set it up, and one planned but filtered out:
   * built by the reporter's buildReport.
   */
  function twoAgents(): ContractReport {
    const tests: ReportTest[] = [];
    for (const [project, agent_url] of [
      ['seller-a', 'https://a.example/mcp'],
      ['seller-b', 'https://b.example/mcp'],
    ] as const) {
      const storyboard = {
        id: 'sb',
        title: 'Storyboard',
        track: 'core',
        file: '/r/sb.storyboard.yaml',
        agent_url,
        protocol: 'mcp' as const,
      };
      const result: StepResult = {
        storyboard_id: 'sb',
        phase_id: 'p',
        step_id: 'graded',
        task: 't',
        passed: project === 'seller-a',
        duration_ms: 1,
        validations: [],
        extraction: { path: 'none' },
        ...(project === 'seller-b' ? { error: 'boom' } : {}),
      };
      const setup: StepResult = { ...result, step_id: 'setup', passed: true };
      delete setup.error;
      tests.push({
        project,
        file: storyboard.file,
        name: 'setup',
        state: 'skipped',
        errors: [],
        meta: { adcpPlanned: { storyboard, phase_id: 'p', step_id: 'setup', task: 't' } },
      });
      tests.push({
        project,
        file: storyboard.file,
        name: 'graded',
        state: result.passed ? 'passed' : 'failed',
        errors: [],
        meta: {
          adcp: { id: 'sb/p/graded', status: result.passed ? 'passed' : 'failed', result, storyboard },
          adcpReplayed: [{ id: 'sb/p/setup', status: 'passed', result: setup, storyboard }],
        },
      });
      tests.push({
        project,
        file: storyboard.file,
        name: 'later',
        state: 'skipped',
        errors: [],
        meta: { adcpPlanned: { storyboard, phase_id: 'p', step_id: 'later', task: 't' } },
      });
    }
    return buildReport(tests, {
      root: '/r',
      started_at: '2026-01-01T00:00:00.000Z',
      finished_at: '2026-01-01T00:00:02.000Z',
      test_name_pattern: 'graded',
    });
  }

  it('the markdown names project and agent on each row and says the run was partial', () => {
    const md = renderMarkdownSummary(twoAgents(), { root: '/r' });
    expect(md).toContain('Against 2 agents (below); vitest-adcp');
    expect(md).toContain(
      '◐ Partial run: 2 steps not selected, 2 planned steps without a verdict (not reached, or replayed for a selected step) (test name filter `graded`); no storyboard with a step left out or unrun is called passed.',
    );
    expect(md).toContain('| core | `seller-a` `https://a.example/mcp` | ◐ incomplete | 1 incomplete |');
    expect(md).toContain('| core | `seller-b` `https://b.example/mcp` | ❌ failed | 1 failed |');
    expect(md).toContain(
      '| Storyboard `sb` | core | `seller-a` `https://a.example/mcp` | ◐ incomplete | 1 / 0 / 0 / 1 | `sb.storyboard.yaml` |',
    );
    expect(md).toContain(
      '**Storyboard** › p › graded (`t`) in `sb.storyboard.yaml` against `seller-b` `https://b.example/mcp`',
    );
  });

  it('the HTML shows each agent, the replayed steps as not run, no step the filter left out, and a partial-run warning', () => {
    const page = renderHtmlReport(twoAgents(), { root: '/r' });
    expect(page).toContain('2 agents: seller-a · https://a.example/mcp, seller-b · https://b.example/mcp');
    expect(page).toContain(
      '<p class="warning">Partial run: 2 steps not selected, 2 planned steps without a verdict (not reached, or replayed for a selected step) (test name filter graded).</p>',
    );
    expect(page.match(/<details class="sb" data-status="(\w+)"/g)).toEqual([
      '<details class="sb" data-status="incomplete"',
      '<details class="sb" data-status="failed"',
    ]);
    expect(page.match(/<details class="step" data-status="not_run">/g)).toHaveLength(2);
    expect(page).toContain('<div class="skip">not run (replayed): replayed, not graded: its own test was filtered out');
    // The step the filter left out is no step of the page: a row of the not-selected table.
    expect(page).not.toMatch(/<details class="step"[^>]*>\s*<summary>[^<]*later/);
    expect(page).toContain('<tr><td><code>sb/p/later</code></td><td>explicit_scope_excluded</td><td>1</td>');
    expect(page).toContain('sb.storyboard.yaml · seller-b · https://b.example/mcp');
  });
});

/** A report of one storyboard with failing steps, written by hand (what a report file from elsewhere could hold). */
function synthetic(o: {
  title: string;
  stepId: string;
  error: string;
  copies?: number;
  request?: unknown;
}): ContractReport {
  const step = (i: number): StepResult => ({
    storyboard_id: 'sb',
    phase_id: 'p',
    step_id: o.stepId,
    task: 't',
    passed: false,
    duration_ms: i,
    validations: [],
    extraction: { path: 'none' },
    error: o.error,
    ...(o.request ? { request: { transport: 'mcp', operation: 't', payload: o.request } } : {}),
  });
  const steps = Array.from({ length: o.copies ?? 1 }, (_, i) => step(i));
  const target = { project: '', agent_url: 'http://127.0.0.1:1/mcp', protocol: 'mcp' as const };
  return {
    contract: { id: 'runner_output_contract', version: '1.1.0' },
    runner: { name: 'vitest-adcp', version: '0.1.0' },
    generated_at: '2026-01-01T00:00:00.000Z',
    run: buildEnvelope(
      [{ ...target, corpus_version: null }],
      { started_at: '2026-01-01T00:00:00.000Z', finished_at: '2026-01-01T00:00:01.000Z' },
      true,
    ),
    summary: {
      total_steps: steps.length,
      steps_passed: 0,
      steps_failed: steps.length,
      steps_skipped: 0,
      steps_not_run: 0,
      tracks: [
        { track: 'core', ...target, status: 'failed', storyboards: [{ storyboard_id: 'sb', status: 'failed' }] },
      ],
      schemas_used: [],
    },
    storyboards: [
      {
        storyboard_id: 'sb',
        title: o.title,
        track: 'core',
        file: 'sb.storyboard.yaml',
        ...target,
        status: 'failed',
        steps,
      },
    ],
    load_errors: [],
  };
}
