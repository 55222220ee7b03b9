/**
 * `npx vitest-adcp <agent-url>` as CI runs it: the built command in a child
 * process, against the fixture agent, no config file. Built here (tsc, no
 * typecheck — `npm run typecheck` does that) into a private directory laid out
 * like the package (dist/ beside schema/), so the packed-package test, which
 * rebuilds dist/, cannot pull it away mid-run.
 */
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { resolveStoryboardsForCapabilities } from '@adcp/sdk/testing';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { resolveCorpus } from '../../src/corpus.js';
import { callTool } from '../fixture-agent/helpers.js';
import { assertValidContractReport } from '../helpers/contract-schema.js';
import { closedPort } from '../helpers/ports.js';
import { countingProxy } from '../helpers/counting-proxy.js';
import { testDir } from '../helpers/temp-dir.js';
import { buildBin, repoRoot, runNode, type NodeRun } from '../helpers/run-vitest.js';

const scratch = join(repoRoot, '.vitest-adcp', `cli-${process.pid}`);
const cliJs = join(scratch, 'dist', 'cli.js');
const discovery = 'fixtures/storyboards/discovery.storyboard.yaml';
const corpusRoot = resolveCorpus(undefined, repoRoot).root;

beforeAll(async () => {
  await buildBin(scratch);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function cli(...args: string[]): Promise<NodeRun> {
  return runNode([cliJs, ...args], {
    env: {
      ADCP_AGENT_URL: undefined,
      ADCP_AUTH_TOKEN: undefined,
      ADCP_PROTOCOL: undefined,
      ADCP_COMPLIANCE: undefined,
    },
  });
}

/** Storyboard ids printed by `--list` (one `id<TAB>path` per line). */
function listed(run: NodeRun): string[] {
  return run.stdout
    .split('\n')
    .filter((line) => line.includes('\t'))
    .map((line) => line.split('\t')[0]!)
    .sort();
}

/** What the reference selects for these capabilities, plus the scenarios those require (as its comply() expands them). */
function referenceSelection(capabilities: { supported_protocols?: string[]; specialisms?: string[] }): string[] {
  const { storyboards } = resolveStoryboardsForCapabilities(capabilities, { complianceDir: corpusRoot });
  return [...new Set(storyboards.flatMap((s) => [s.id, ...(s.requires_scenarios ?? [])]))].sort();
}

/** What the reference's comply() runs for these capabilities, in its order: its selection's, each storyboard's scenarios (unless selected) just before it. */
function referenceRunOrder(capabilities: { supported_protocols?: string[]; specialisms?: string[] }): string[] {
  const { storyboards } = resolveStoryboardsForCapabilities(capabilities, { complianceDir: corpusRoot });
  const seen = new Set(storyboards.map((s) => s.id));
  return storyboards.flatMap((s) => [
    ...(s.requires_scenarios ?? []).filter((id) => !seen.has(id) && seen.add(id)),
    s.id,
  ]);
}

describe('running storyboards', () => {
  it("exits 0 on a conformant agent, with Vitest's report and the contract JSON (--report), HTML and markdown", async () => {
    const out = join(scratch, 'reports', 'contract.json');
    const html = join(scratch, 'reports', 'report.html');
    const markdown = join(scratch, 'reports', 'summary.md');
    const run = await cli(
      inject('agentUrl'),
      '--storyboards',
      `capability_discovery,${discovery}`,
      '--report',
      out,
      '--report-html',
      html,
      '--report-markdown',
      markdown,
    );
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/Test Files\s+2 passed \(2\)/);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.contract).toEqual({ id: 'runner_output_contract', version: '1.1.0' });
    expect(report.storyboards.map((s: any) => [s.storyboard_id, s.status]).sort()).toEqual([
      ['capability_discovery', 'passed'],
      ['fixture_discovery', 'passed'],
    ]);
    expect(report.summary).toMatchObject({
      steps_failed: 0,
      total_steps: report.storyboards.flatMap((s: any) => s.steps).length,
    });
    assertValidContractReport(report);
    // The CLI runs its storyboards in the plugin's own project, against the one agent it was given.
    expect(report.run).toMatchObject({
      agent_url: inject('agentUrl'),
      protocol: 'mcp',
      project: 'vitest-adcp',
      complete: true,
    });
    // The same report as HTML and markdown, each path said.
    expect(readFileSync(html, 'utf8')).toContain('<details class="sb" data-status="passed" data-track="core">');
    expect(readFileSync(markdown, 'utf8')).toMatch(/^## ✅ AdCP storyboards: \d+ passed, 0 failed/);
    expect(run.stdout).toMatch(/vitest-adcp: HTML report written to .*report\.html/);
    expect(run.stdout).toMatch(/vitest-adcp: markdown summary written to .*summary\.md/);
  });

  it("--protocol a2a: the same storyboards over the agent's A2A endpoint, chosen from its capabilities as over MCP", async () => {
    const a2a = `${inject('agentOrigin')}/a2a`;
    const out = join(scratch, 'reports', 'contract-a2a.json');
    const run = await cli(
      a2a,
      '--protocol',
      'a2a',
      '--storyboards',
      `capability_discovery,${discovery}`,
      '--report',
      out,
    );
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.storyboards.map((s: any) => [s.storyboard_id, s.status]).sort()).toEqual([
      ['capability_discovery', 'passed'],
      ['fixture_discovery', 'passed'],
    ]);
    const steps = report.storyboards.flatMap((s: any) => s.steps);
    expect(
      steps.every(
        (s: any) =>
          s.request.transport === 'a2a' && s.response.transport === 'a2a' && s.response.task_state === 'completed',
      ),
    ).toBe(true);
    assertValidContractReport(report);
    expect(report.run).toMatchObject({ agent_url: a2a, protocol: 'a2a' });
    const listedOverA2a = await cli(a2a, '--protocol', 'a2a', '--list');
    expect(listedOverA2a.exitCode, listedOverA2a.stderr).toBe(0);
    expect(listed(listedOverA2a)).toEqual(listed(await cli(inject('agentUrl'), '--list')));
  });

  it('exits 1 when steps fail', async () => {
    const run = await cli(inject('agentOrigin') + '/x/wrong_value/mcp', '--storyboards', discovery);
    expect(run.exitCode, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toMatch(/Tests\s+\d+ failed/);
  });
});

describe("choosing the storyboards from the agent's capabilities (the default)", () => {
  it('selects what the reference selects for the declared capabilities', async () => {
    const declared = (await callTool(inject('agentUrl'), 'get_adcp_capabilities')).structuredContent!;
    const run = await cli(inject('agentUrl'), '--list');
    expect(run.exitCode, run.stderr).toBe(0);
    expect(listed(run)).toEqual(
      referenceSelection({ supported_protocols: declared.supported_protocols, specialisms: declared.specialisms }),
    );
    expect(listed(run)).toEqual(
      expect.arrayContaining(['capability_discovery', 'media_buy_seller', 'creative_lifecycle']),
    );
    expect(run.stderr).toBe('');
  });

  it("--sequential --list: in the order --sequential runs them, the reference's (comply()'s) order", async () => {
    const declared = (await callTool(inject('agentUrl'), 'get_adcp_capabilities')).structuredContent!;
    const run = await cli(inject('agentUrl'), '--list', '--sequential');
    expect(run.exitCode, run.stderr).toBe(0);
    const inOrder = run.stdout
      .split('\n')
      .filter((line) => line.includes('\t'))
      .map((line) => line.split('\t')[0]!);
    expect(inOrder).toEqual(
      referenceRunOrder({ supported_protocols: declared.supported_protocols, specialisms: declared.specialisms }),
    );
    expect(inOrder).not.toEqual([...inOrder].sort());
  });

  it('warns once about a specialism or protocol no corpus knows, and assesses the rest', async () => {
    const run = await cli(inject('agentOrigin') + '/x/unknown_declarations/mcp', '--list');
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr.match(/specialism "holographic-ads"/g)).toHaveLength(1);
    expect(run.stderr.match(/"telepathy"/g)).toHaveLength(1);
    expect(listed(run)).toEqual(
      referenceSelection({ supported_protocols: ['media_buy', 'creative'], specialisms: ['sales-guaranteed'] }),
    );
    expect(listed(run)).toContain('sales_guaranteed');
  });

  it('needs no @adcp/sdk: a corpus named by path, in a directory with none, is selected from by its own index', async () => {
    const declared = (await callTool(inject('agentUrl'), 'get_adcp_capabilities')).structuredContent!;
    const elsewhere = testDir('adcp-no-sdk-');
    const run = await runNode([cliJs, inject('agentUrl'), '--list'], {
      cwd: elsewhere,
      env: {
        ADCP_AGENT_URL: undefined,
        ADCP_AUTH_TOKEN: undefined,
        ADCP_PROTOCOL: undefined,
        ADCP_COMPLIANCE: corpusRoot,
        XDG_CACHE_HOME: elsewhere,
      },
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(listed(run)).toEqual(
      referenceSelection({ supported_protocols: declared.supported_protocols, specialisms: declared.specialisms }),
    );
    expect(run.stdout).toMatch(/storyboards \(from the agent's capabilities: /);
  });

  it('runs the corpus of an @adcp/sdk installed by pnpm (its real path below node_modules/.pnpm)', async () => {
    // pnpm's layout: node_modules/@adcp/sdk links to node_modules/.pnpm/<name>@<version>/node_modules/@adcp/sdk, the
    // path Node resolves. The exclude let node_modules/@adcp through and dropped .pnpm: "No test files found".
    const dir = testDir('adcp-pnpm-');
    const sdk = join(dir, 'node_modules', '.pnpm', '@adcp+sdk@6.11.0', 'node_modules', '@adcp', 'sdk');
    const installed = join(repoRoot, 'node_modules', '@adcp', 'sdk');
    cpSync(corpusRoot, join(sdk, 'compliance', 'cache', basename(corpusRoot)), { recursive: true });
    cpSync(join(installed, 'package.json'), join(sdk, 'package.json'));
    symlinkSync(join(installed, 'dist'), join(sdk, 'dist'));
    mkdirSync(join(dir, 'node_modules', '@adcp'));
    symlinkSync(relative(join(dir, 'node_modules', '@adcp'), sdk), join(dir, 'node_modules', '@adcp', 'sdk'));
    const run = await runNode([cliJs, inject('agentUrl'), '--storyboards', 'capability_discovery'], {
      cwd: dir,
      env: { ADCP_AGENT_URL: undefined, ADCP_AUTH_TOKEN: undefined, ADCP_COMPLIANCE: undefined, XDG_CACHE_HOME: dir },
    });
    expect(run.stdout + run.stderr).not.toContain('No test files found');
    expect(run.stdout).toMatch(/Test Files {2}1 passed \(1\)/);
    expect(run.stdout).toContain('node_modules/.pnpm/@adcp+sdk@6.11.0/node_modules/@adcp/sdk/compliance/cache/');
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
  });

  it("sends the run's preflight while it asks the agent for its capabilities, and the run takes that one", async () => {
    // The capabilities' answer is held until the preflight's protected read (list_creatives, with a token) has been
    // sent: a preflight made when the run starts, after the selection, would come only once the hold gave up.
    const proxy = await countingProxy(inject('agentUrl'), {
      hold: { tool: 'get_adcp_capabilities', until: 'list_creatives', maxMs: 20_000 },
    });
    try {
      // The capability selection, and of what it selects the one storyboard that calls nothing but the capabilities.
      const run = await runNode([cliJs, proxy.url, '--auth', 'demo-preflight', '--', '-t', 'capability_discovery'], {
        env: { ADCP_AGENT_URL: undefined, ADCP_AUTH_TOKEN: undefined, ADCP_COMPLIANCE: undefined },
      });
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      const spans = proxy.toolSpans();
      const capabilities = spans.find((span) => span.tool === 'get_adcp_capabilities')!;
      const probes = spans.filter((span) => span.tool === 'list_creatives');
      expect(probes[0]!.start).toBeLessThan(capabilities.end);
      // One preflight: the run did not make its own when it started.
      expect(probes).toHaveLength(1);
    } finally {
      await proxy.close();
    }
  });

  it('exits 2 with one message naming the URL when the agent cannot be reached', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const run = await cli(url);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(`cannot ask the agent at ${url} for its capabilities`);
    expect(run.stderr).toMatch(/check that it is up/);
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });
});

describe('usage and configuration errors exit 2 before anything runs', () => {
  it.each([
    ['a missing URL', [], /missing the agent URL/],
    ['an unknown flag', ['http://127.0.0.1:1/mcp', '--bogus'], /Unknown option '--bogus'/],
    [
      'plain http to a host that is not loopback',
      ['http://agent.invalid/mcp'],
      /plain http to a host that is not loopback: .*--allow-http/,
    ],
    [
      'an unknown storyboard id or bundle',
      ['http://127.0.0.1:1/mcp', '--storyboards', 'capability_discovry,sales-guarnteed'],
      /no storyboard "capability_discovry" \(did you mean "capability_discovery"\?\); storyboard "sales-guarnteed" \(did you mean bundle "sales-guaranteed"\?\)/,
    ],
    [
      'a storyboard file that does not exist',
      ['http://127.0.0.1:1/mcp', '--storyboards', 'nope.storyboard.yaml'],
      /--storyboards nope\.storyboard\.yaml: no such file/,
    ],
    ['an unknown protocol', ['http://127.0.0.1:1/mcp', '--protocol', 'grpc'], /--protocol is "grpc": use mcp or a2a/],
    [
      "two positionals (Vitest's options go after --)",
      ['http://127.0.0.1:1/mcp', 'x'],
      /one agent URL, got 2: http:\/\/127\.0\.0\.1:1\/mcp x \(storyboards go in --storyboards a,b; Vitest's options after --, e\.g\. -- -t pattern\)/,
    ],
  ])('%s', async (_, args, message) => {
    const run = await cli(...args);
    expect(run.exitCode, run.stdout + run.stderr).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });

  it('takes plain http to loopback (127.0.0.0/8, ::1, localhost) without --allow-http', async () => {
    for (const host of ['127.8.9.10', '[::1]', 'localhost']) {
      const run = await cli(`http://${host}:1/mcp`, '--storyboards', 'nope.storyboard.yaml');
      expect(run.exitCode).toBe(2);
      expect(run.stderr, host).not.toMatch(/plain http/);
      expect(run.stderr, host).toMatch(/no such file/);
    }
  });

  it('--allow-http lets a non-loopback http URL through (to the next check)', async () => {
    const run = await cli('http://agent.invalid/mcp', '--allow-http', '--storyboards', 'nope.storyboard.yaml');
    expect(run.exitCode).toBe(2);
    expect(run.stderr).not.toMatch(/plain http/);
    expect(run.stderr).toMatch(/--storyboards nope\.storyboard\.yaml: no such file/);
  });

  it('--webhook-receiver hosts a loopback receiver: webhook_emission passes; a bad webhook setting is a usage error', async () => {
    const run = await cli(
      inject('agentUrl'),
      '--storyboards',
      'webhook_emission',
      '--webhook-receiver',
      '--auth',
      'demo-cli-webhooks',
    );
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/Tests\s+7 passed \(7\)/);
    const http = await cli(
      inject('agentUrl'),
      '--storyboards',
      'webhook_emission',
      '--webhook-base-url',
      'http://hooks.example.com',
      '--webhook-port',
      '4100',
    );
    expect(http.exitCode).toBe(2);
    expect(http.stderr).toMatch(/plain http: proxy_url mode requires https/);
  });

  it('--help prints the usage and exits 0', async () => {
    const run = await cli('--help');
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/^Usage: npx vitest-adcp <agent-url> \[options\]/);
    for (const flag of [
      '--auth',
      '--protocol',
      '--storyboards',
      '--tracks',
      '--report',
      '--allow-http',
      '--compliance-version',
      '--list',
      '--lenient-keys',
      '--sequential',
    ])
      expect(run.stdout).toContain(flag);
  });
});
