/**
 * The bin (`npx vitest-adcp <url>`) against issue 21, items 9 and 12, as CI runs it: the built command in a child
 * process (built as test/e2e/cli.test.ts builds it), against the fixture agent and a dead port.
 *
 * - everything after `--` is Vitest's: `-t`, `--bail`, a JUnit reporter; what makes no sense here is a usage error;
 * - `--version`;
 * - exit 2 with one message, no per-step failures, when the agent cannot be reached or rejects the token — with
 *   `--storyboards` too, where no capability call comes first (the plugin's preflight stops the run);
 * - `--report-html` / `--report-markdown` without `--report`;
 * - `--help` and the README's bin section name the same flags;
 * - `--list`: each storyboard with why, a count, the note on a bundle's baseline id, and no Vitest;
 * - `init`: a starter storyboard, never over an existing file, that runs.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest';
import { closedPort } from '../helpers/ports.js';
import { buildBin, NO_AGENT_ENV as CLEAN_ENV, repoRoot, runNode, type NodeRun } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `cli-flags-${process.pid}`);
const cliJs = join(scratch, 'dist', 'cli.js');
const discovery = 'fixtures/storyboards/discovery.storyboard.yaml';
/** The starter storyboard `init` copies (the package ships examples/). */
const example = join(repoRoot, 'examples', 'discovery.storyboard.yaml');

beforeAll(async () => {
  await buildBin(scratch);
  // Laid out like the installed package: package.json (the version) and examples/ (init) beside dist/.
  symlinkSync(join(repoRoot, 'package.json'), join(scratch, 'package.json'));
  symlinkSync(join(repoRoot, 'examples'), join(scratch, 'examples'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function cli(args: string[], options: { cwd?: string; bin?: string } = {}): Promise<NodeRun> {
  return runNode([options.bin ?? cliJs, ...args], { env: CLEAN_ENV, ...(options.cwd ? { cwd: options.cwd } : {}) });
}

/** Vitest's summary line for tests: `Tests  2 passed | 4 skipped (6)`. */
function testsLine(run: NodeRun): string {
  return /^\s*Tests\s+(.*)$/m.exec(run.stdout)?.[1] ?? `(no Tests line)\n${run.stdout}\n${run.stderr}`;
}

describe('everything after -- goes to Vitest', () => {
  it('-t runs only the matching steps (the rest skipped), exit 0', async () => {
    const run = await cli([inject('agentUrl'), '--storyboards', discovery, '--', '-t', '\\(get_capabilities\\)']);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(testsLine(run)).toMatch(/^1 passed \| 3 skipped \(4\)/);
    // Without it, all four run: the filter is what skipped them.
    const all = await cli([inject('agentUrl'), '--storyboards', discovery]);
    expect(testsLine(all)).toMatch(/^4 passed \(4\)/);
  });

  it('--bail 1 stops the run at the first failed step, exit 1', async () => {
    const broken = `${inject('agentOrigin')}/x/wrong_value/mcp`;
    const bailed = await cli([broken, '--storyboards', discovery, '--', '--bail', '1']);
    expect(bailed.exitCode, bailed.stdout + bailed.stderr).toBe(1);
    expect(testsLine(bailed)).toMatch(/^1 failed \(4\)/);
    const unbailed = await cli([broken, '--storyboards', discovery]);
    expect(unbailed.exitCode).toBe(1);
    expect(testsLine(unbailed)).toMatch(/^[2-4] failed/);
  });

  it('--reporter=junit --outputFile writes JUnit XML beside the default reporter and --report', async () => {
    const junit = join(scratch, 'reports', 'junit.xml');
    const report = join(scratch, 'reports', 'with-junit.json');
    const run = await cli([
      inject('agentUrl'),
      '--storyboards',
      discovery,
      '--report',
      report,
      '--',
      '--reporter=default',
      '--reporter=junit',
      '--outputFile',
      junit,
    ]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const xml = readFileSync(junit, 'utf8');
    expect(xml).toMatch(/<testsuites name="vitest tests" tests="4" failures="0" errors="0"/);
    expect(xml).toContain(
      'name="Fixture agent discovery (fixture_discovery) &gt; Capability discovery (capabilities) &gt; Discover the fixture agent&apos;s capabilities (get_capabilities)"',
    );
    // The default reporter kept (named), and the contract report written as without --.
    expect(testsLine(run)).toMatch(/^4 passed \(4\)/);
    expect(JSON.parse(readFileSync(report, 'utf8')).summary).toMatchObject({ steps_passed: 4, steps_failed: 0 });
  });

  it("--reporter=json: stdout is Vitest's JSON alone (what the command says of the run goes to stderr)", async () => {
    const run = await cli([inject('agentUrl'), '--storyboards', discovery, '--', '--reporter=json']);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ numTotalTests: 4, numPassedTests: 4, success: true });
    expect(run.stderr).toContain('vitest-adcp: 1 storyboard (1 named in --storyboards); --list shows each and why');
  });

  it.each([
    ['--watch', ['--watch']],
    ['--config', ['--config', 'vitest.config.ts']],
    ['--root', ['--root', '/tmp']],
  ])('%s does not apply to a one-off run: exit 2 with what to do instead', async (flag, args) => {
    const run = await cli([inject('agentUrl'), '--storyboards', discovery, '--', ...args]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toContain(
      `vitest-adcp: -- ${flag}: this command runs the storyboards once, from the current directory, without a Vitest config, so ${flag} does not apply.`,
    );
    expect(run.stdout).not.toMatch(/RUN/);
  });

  it('--list with Vitest arguments is a usage error; so is a second positional before --', async () => {
    const list = await cli([inject('agentUrl'), '--list', '--', '-t', 'x']);
    expect(list.exitCode).toBe(2);
    expect(list.stderr).toContain(
      '--list prints the storyboards that would run, without running Vitest: the arguments after -- (-t x) do not apply to it',
    );
    const two = await cli([inject('agentUrl'), '-t', 'x']);
    expect(two.exitCode).toBe(2);
    expect(two.stderr).toContain("Unknown option '-t'");
  });
});

describe('--version', () => {
  it("prints this package's version, and the Vitest, @adcp/sdk and corpus versions a run would use", async () => {
    const run = await cli(['--version']);
    expect(run.exitCode, run.stderr).toBe(0);
    const own = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version;
    const vitest = JSON.parse(readFileSync(join(repoRoot, 'node_modules', 'vitest', 'package.json'), 'utf8')).version;
    const sdk = JSON.parse(
      readFileSync(join(repoRoot, 'node_modules', '@adcp', 'sdk', 'package.json'), 'utf8'),
    ).version;
    // The corpus the SDK pins (its ADCP_VERSION), and why that one.
    const corpus = readFileSync(join(repoRoot, 'node_modules', '@adcp', 'sdk', 'ADCP_VERSION'), 'utf8').trim();
    expect(run.stdout.trim()).toBe(
      `vitest-adcp ${own} (vitest ${vitest}, @adcp/sdk ${sdk}, compliance corpus ${corpus} (the version @adcp/sdk ${sdk} pins))`,
    );
  });
});

describe('exit 2, one message, nothing run: the agent cannot be reached or refuses the token', () => {
  it("a dead port with --storyboards (no capability call first): the preflight's message, no per-step failures", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const report = join(scratch, 'reports', 'dead.json');
    const run = await cli([url, '--storyboards', `capability_discovery,${discovery}`, '--report', report]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toContain(`vitest-adcp cannot run the storyboards: the agent at ${url} cannot be reached`);
    expect(run.stderr.match(/cannot be reached/g)).toHaveLength(1);
    // No step ran, so none failed; no Vitest stack, no "Unhandled Error", no claim that there were no test files.
    expect(run.stdout).not.toMatch(/Tests\s+\d+ failed|FAIL|No test files found/);
    expect(run.stdout + run.stderr).not.toMatch(/Unhandled Error|^\s+at /m);
    expect(run.stderr).not.toMatch(/^vitest-adcp: vitest-adcp/m);
  });

  it("a dead port, capability selection: the capability call's message", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const run = await cli([url]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(`cannot ask the agent at ${url} for its capabilities`);
    expect(run.stdout).not.toMatch(/RUN/);
  });

  it('a token the agent rejects, with --storyboards: one message naming --auth, scrubbed of the token', async () => {
    const token = 'not-a-fixture-key-7c1e';
    const run = await cli([inject('agentUrl'), '--storyboards', discovery, '--auth', token]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toMatch(/rejected the configured token/);
    expect(run.stderr).toMatch(/--auth/);
    expect(run.stdout + run.stderr).not.toContain(token);
    expect(run.stdout).not.toMatch(/Tests\s+\d+ failed|No test files found/);
  });
});

describe('--report-html / --report-markdown without --report', () => {
  it('writes the HTML report and the markdown summary, and no contract JSON', async () => {
    const dir = join(scratch, 'views-only');
    const html = join(dir, 'report.html');
    const markdown = join(dir, 'summary.md');
    const run = await cli([
      inject('agentUrl'),
      '--storyboards',
      discovery,
      '--report-html',
      html,
      '--report-markdown',
      markdown,
    ]);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(readFileSync(html, 'utf8')).toContain('<details class="sb" data-status="passed" data-track="core">');
    expect(readFileSync(markdown, 'utf8')).toMatch(/^## ✅ AdCP storyboards: 4 passed, 0 failed/);
    expect(readdirSync(dir).sort()).toEqual(['report.html', 'summary.md']);
    expect(run.stdout).toMatch(/vitest-adcp: HTML report written to .*report\.html/);
    // The terminal summary, as with --report.
    expect(run.stdout).toContain('vitest-adcp: 1 storyboard, 4 steps: 4 passed, 0 failed, 0 skipped');
  });
});

describe('--help and the README agree', () => {
  /** Every `--flag` of a text (not `--` alone; `-t`-style short flags are not compared). */
  function flags(text: string): Set<string> {
    return new Set(text.match(/(?<![\w-])--[A-Za-z][\w-]*/g) ?? []);
  }

  it("names the same flags in --help and in the README's bin section, both ways", async () => {
    const help = await cli(['--help']);
    expect(help.exitCode).toBe(0);
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const start = readme.indexOf('## Without a config: `npx vitest-adcp <url>`');
    expect(start).toBeGreaterThan(-1);
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
    const inHelp = flags(help.stdout);
    const inReadme = flags(section);
    expect(inHelp.size).toBeGreaterThan(25);
    expect(
      [...inHelp].filter((f) => !inReadme.has(f)),
      'in --help, not in the README',
    ).toEqual([]);
    expect(
      [...inReadme].filter((f) => !inHelp.has(f)),
      'in the README, not in --help',
    ).toEqual([]);
  });
});

describe('--list: fast, with the reason for each storyboard and a count', () => {
  /** `id<TAB>path<TAB>why` lines. */
  function rows(run: NodeRun): { id: string; path: string; why: string }[] {
    return run.stdout
      .split('\n')
      .filter((line) => line.includes('\t'))
      .map((line) => {
        const [id = '', path = '', why = ''] = line.split('\t');
        return { id, path, why };
      });
  }

  it('capability selection: which bundle each storyboard is for, the required scenarios, and the count', async () => {
    const run = await cli([inject('agentUrl'), '--list']);
    expect(run.exitCode, run.stderr).toBe(0);
    const listed = rows(run);
    const why = Object.fromEntries(listed.map((r) => [r.id, r.why]));
    expect(why.capability_discovery).toBe('capabilities: universal');
    expect(why.media_buy_seller).toBe('capabilities: protocol media-buy');
    expect(why.creative_lifecycle).toBe('capabilities: protocol creative');
    expect(why['media_buy_seller/refine_products']).toBe(
      'capabilities: protocol media-buy; required scenario of media_buy_seller',
    );
    const universal = listed.filter((r) => r.why === 'capabilities: universal').length;
    const mediaBuy = listed.filter((r) => r.why.startsWith('capabilities: protocol media-buy')).length;
    const creative = listed.filter((r) => r.why.startsWith('capabilities: protocol creative')).length;
    expect(universal + mediaBuy + creative).toBe(listed.length);
    expect(run.stdout.trim().split('\n').at(-1)).toBe(
      `${listed.length} storyboards (from the agent's capabilities: ${creative} protocol creative, ${mediaBuy} protocol media-buy, ${universal} universal)`,
    );
  });

  it('--storyboards media_buy_seller: the storyboard, its required scenarios, and why capability selection runs more', async () => {
    const named = await cli([inject('agentUrl'), '--list', '--storyboards', 'media_buy_seller']);
    expect(named.exitCode, named.stderr).toBe(0);
    const listed = rows(named);
    expect(listed[0]).toMatchObject({ id: 'media_buy_seller', why: '--storyboards media_buy_seller' });
    expect(listed.slice(1).every((r) => r.why === 'required scenario of media_buy_seller')).toBe(true);
    const bundle = rows(await cli([inject('agentUrl'), '--list', '--storyboards', 'media-buy']));
    const fromCapabilities = rows(await cli([inject('agentUrl'), '--list'])).filter((r) =>
      r.why.startsWith('capabilities: protocol media-buy'),
    );
    expect(bundle.map((r) => r.id)).toEqual(fromCapabilities.map((r) => r.id));
    expect(bundle.length).toBeGreaterThan(listed.length);
    expect(named.stdout).toContain(
      `note: --storyboards media_buy_seller runs that storyboard and the ${listed.length - 1} scenarios it requires; capability selection, for an agent that declares protocol media-buy, runs the whole bundle media-buy (${bundle.length} storyboards, also `,
    );
    expect(named.stdout).toContain('--storyboards media-buy runs that.');
    expect(named.stdout.trim().split('\n').at(-1)).toBe(
      `${listed.length} storyboards (1 named in --storyboards, ${listed.length - 1} required scenarios)`,
    );
    // The run says it too, at its start.
    const run = await cli([`http://127.0.0.1:${await closedPort()}/mcp`, '--storyboards', 'media_buy_seller']);
    expect(run.stderr).toContain(
      `vitest-adcp: ${listed.length} storyboards (1 named in --storyboards, ${listed.length - 1} required scenarios); --list shows each and why`,
    );
    expect(run.stderr).toContain('vitest-adcp: note: --storyboards media_buy_seller runs that storyboard');
  });

  it('a named file, a bundle and a track each say so', async () => {
    const run = await cli([
      inject('agentUrl'),
      '--list',
      '--storyboards',
      `idempotency,${discovery}`,
      '--tracks',
      'security',
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    const why = Object.fromEntries(rows(run).map((r) => [r.id, r.why]));
    expect(why.fixture_discovery).toBe(`--storyboards ${discovery}`);
    expect(why.idempotency).toMatch(/^bundle idempotency \(--storyboards\)/);
    expect(Object.values(why)).toContain('track security (--tracks)');
  });

  it('never starts Vitest: it lists where Vitest cannot even be imported', async () => {
    // A project whose node_modules has everything but vitest, and the bin installed in it.
    // Outside the repository: nothing up the tree may hold a vitest either.
    const project = mkdtempSync(join(tmpdir(), 'vitest-adcp-no-vitest-'));
    onTestFinished(() => rmSync(project, { recursive: true, force: true }));
    const modules = join(project, 'node_modules');
    mkdirSync(join(modules, '.bin'), { recursive: true });
    for (const name of readdirSync(join(repoRoot, 'node_modules'))) {
      if (name === 'vitest' || name === '.bin' || name === '.vite' || name.startsWith('.')) continue;
      symlinkSync(join(repoRoot, 'node_modules', name), join(modules, name));
    }
    const installed = join(modules, 'vitest-adcp');
    cpSync(join(scratch, 'dist'), join(installed, 'dist'), { recursive: true });
    symlinkSync(join(repoRoot, 'schema'), join(installed, 'schema'));
    writeFileSync(join(installed, 'package.json'), readFileSync(join(repoRoot, 'package.json')));
    writeFileSync(join(project, 'package.json'), '{ "name": "no-vitest", "private": true }\n');
    const bin = join(installed, 'dist', 'cli.js');
    const list = await cli([inject('agentUrl'), '--list'], { cwd: project, bin });
    expect(list.exitCode, list.stderr).toBe(0);
    expect(rows(list).map((r) => r.id)).toEqual(expect.arrayContaining(['capability_discovery', 'media_buy_seller']));
    const version = await cli(['--version'], { cwd: project, bin });
    expect(version.exitCode, version.stderr).toBe(0);
    expect(version.stdout).toMatch(
      /^vitest-adcp \S+ \(vitest not installed, @adcp\/sdk \d+\.\d+\.\d+, compliance corpus \d/,
    );
    // The same bin does need Vitest to run: this project really has none.
    const run = await cli([inject('agentUrl'), '--storyboards', 'capability_discovery'], { cwd: project, bin });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(
      'vitest-adcp: Vitest is not installed where vitest-adcp is, and the storyboards run as Vitest tests: install it beside vitest-adcp (npm install -D vitest)',
    );
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('npx vitest-adcp init', () => {
  it('writes the starter storyboard, says what to run next, never overwrites, and the written file runs', async () => {
    const project = join(scratch, 'init-project');
    mkdirSync(project, { recursive: true });
    const first = await cli(['init'], { cwd: project });
    expect(first.exitCode, first.stderr).toBe(0);
    const written = join(project, 'agent.storyboard.yaml');
    expect(readFileSync(written, 'utf8')).toBe(readFileSync(example, 'utf8'));
    expect(first.stdout).toContain('vitest-adcp: wrote ./agent.storyboard.yaml');
    expect(first.stdout).toContain('npx vitest-adcp <agent-url> --storyboards ./agent.storyboard.yaml');
    expect(first.stdout).toContain('plugins: [adcpStoryboards()]');

    writeFileSync(written, '# mine\n');
    const again = await cli(['init'], { cwd: project });
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain('vitest-adcp: init: ./agent.storyboard.yaml exists already; it is left as it is');
    expect(readFileSync(written, 'utf8')).toBe('# mine\n');

    writeFileSync(join(project, 'notes.txt'), 'a file, not a directory\n');
    const blocked = await cli(['init', 'notes.txt/seller.storyboard.yaml'], { cwd: project });
    expect(blocked.exitCode).toBe(2);
    expect(blocked.stderr).toMatch(
      /^vitest-adcp: init: cannot write \.\/notes\.txt\/seller\.storyboard\.yaml \(E[A-Z]+\)$/m,
    );
    const badName = await cli(['init', 'seller.yaml'], { cwd: project });
    expect(badName.exitCode).toBe(2);
    expect(badName.stderr).toContain('init seller.yaml: name it *.storyboard.yaml, e.g. seller.storyboard.yaml');

    // A file named, in a directory that does not exist yet: made.
    const other = await cli(['init', 'storyboards/seller.storyboard.yaml'], { cwd: project });
    expect(other.exitCode, other.stderr).toBe(0);
    expect(other.stdout).toContain('npx vitest-adcp <agent-url> --storyboards ./storyboards/seller.storyboard.yaml');
    const run = await cli(
      [inject('agentUrl'), '--storyboards', './storyboards/seller.storyboard.yaml', '--auth', 'demo-init'],
      { cwd: project },
    );
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(testsLine(run)).toMatch(/^\d+ passed \(\d+\)/);
  });
});
