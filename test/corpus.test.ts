import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CorpusNotFoundError, missingSchemas, resolveCorpus } from '../src/corpus.js';
import { resolveRuntimeConfig } from '../src/config.js';
import { CorpusSelectionError, listCorpus, selectCorpus } from '../src/storyboard/select.js';
import { testDir } from './helpers/temp-dir.js';

const repo = join(import.meta.dirname, '..');
const installed = join(repo, 'node_modules', '@adcp', 'sdk', 'compliance', 'cache', '3.0.6');

describe('ADCP_COMPLIANCE: finding the corpus', () => {
  it('defaults to the newest version in the installed @adcp/sdk, with its schemas', () => {
    const corpus = resolveCorpus(undefined, repo);
    expect(corpus).toMatchObject({
      root: installed,
      version: '3.0.6',
      schemasDir: expect.stringMatching(/schemas-data\/3\.0$/),
    });
  });

  it('takes the version the SDK pins (ADCP_VERSION), else its newest release, and says why (Corpus.choice)', () => {
    const project = mkdtempSync(join(tmpdir(), 'adcp-choice-'));
    try {
      const sdk = join(project, 'node_modules', '@adcp', 'sdk');
      for (const version of ['3.0.12', '3.1.0-beta.7', '3.1.15', '3.2.0']) {
        mkdirSync(join(sdk, 'compliance', 'cache', version), { recursive: true });
        writeFileSync(
          join(sdk, 'compliance', 'cache', version, 'index.json'),
          JSON.stringify({ adcp_version: version }),
        );
      }
      writeFileSync(join(sdk, 'package.json'), JSON.stringify({ name: '@adcp/sdk', version: '13.0.0' }));
      writeFileSync(join(sdk, 'ADCP_VERSION'), '3.1.15\n');
      expect(resolveCorpus(undefined, project)).toMatchObject({
        version: '3.1.15',
        choice: 'the version @adcp/sdk 13.0.0 pins',
      });
      expect(resolveCorpus('3.2.0', project)).toMatchObject({
        version: '3.2.0',
        choice: 'named, shipped in @adcp/sdk 13.0.0',
      });
      const tree = join(sdk, 'compliance', 'cache', '3.0.12');
      expect(resolveCorpus(tree, project)).toMatchObject({
        version: '3.0.12',
        choice: `the compliance tree at ${tree}`,
      });
      rmSync(join(sdk, 'ADCP_VERSION'));
      expect(resolveCorpus(undefined, project)).toMatchObject({
        version: '3.2.0',
        choice: 'the newest release in @adcp/sdk 13.0.0',
      });
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });

  it("refuses a corpus of a known version without that version's schemas, unless schemasDir names some", () => {
    const corpus = { root: '/c', version: '3.1.19', schemasDir: undefined, choice: 'named' };
    expect(missingSchemas(corpus, undefined)?.message).toMatch(
      /^the compliance corpus at \/c is AdCP 3\.1\.19, and no JSON Schemas of that version were found .* or set schemasDir\.$/,
    );
    expect(missingSchemas(corpus, '/schemas')).toBeUndefined();
    expect(missingSchemas({ ...corpus, schemasDir: '/s' }, undefined)).toBeUndefined();
    // A tree that does not say its version: nothing to match schemas to.
    expect(missingSchemas({ ...corpus, version: undefined }, undefined)).toBeUndefined();
    expect(missingSchemas(resolveCorpus(undefined, repo), undefined)).toBeUndefined();
  });

  it('takes a version or a path', () => {
    expect(resolveCorpus('3.0.6', repo).root).toBe(installed);
    expect(resolveCorpus(installed, repo)).toMatchObject({ root: installed, version: '3.0.6' });
    expect(resolveCorpus('./node_modules/@adcp/sdk/compliance/cache/3.0.6', repo).root).toBe(installed);
  });

  it('says what exists when the version or path is wrong', () => {
    expect(() => resolveCorpus('9.9.9', repo)).toThrow(
      new CorpusNotFoundError(
        'AdCP compliance version "9.9.9" is neither in the installed @adcp/sdk (it has: 3.0.6) nor fetched: `npx vitest-adcp --version --compliance-version 9.9.9` fetches a published version (from ADCP_BASE_URL, default https://adcontextprotocol.org); or set ADCP_COMPLIANCE to an installed version, or to a path.',
      ),
    );
    expect(() => resolveCorpus('/nowhere/at/all', repo)).toThrow(/not a compliance tree .* Point it at a folder like/);
  });
});

describe('selecting corpus storyboards', () => {
  const entries = listCorpus(installed);

  it("reads each storyboard's id, track and required scenarios as the YAML parser would, however they are written", () => {
    const root = mkdtempSync(join(tmpdir(), 'adcp-list-'));
    try {
      mkdirSync(join(root, 'universal'));
      const files: Record<string, string> = {
        'plain.yaml': 'id: plain_one # a comment\ntrack: core\nphases: []\n',
        'quoted.yaml': 'id: "quoted"\ntrack: \'security\'\nphases:\n  - id: p\n',
        'block.yaml': 'id: block\nrequires_scenarios:\n  - a/one\n\n  - b_two # why\nnarrative: x\nphases: []\n',
        'inline.yaml': 'id: inline\nrequires_scenarios: [a/one, b_two]\nphases: []\n',
        'last.yaml': 'id: last\nphases: []\nrequires_scenarios:\n# a note at the margin\n  - c/one\n  - d_two',
        'flow.yaml': '{ id: flow, track: t, phases: [] }\n',
        'odd.yaml': 'id: >-\n  folded_id\nphases: []\n',
        'kit.yaml': 'id: not_a_storyboard\nauth: {}\n',
        'broken.yaml': 'id: broken\nphases: [\n',
      };
      for (const [name, text] of Object.entries(files)) writeFileSync(join(root, 'universal', name), text);
      const entries = Object.fromEntries(
        listCorpus(root).map((e) => [e.path, { id: e.id, track: e.track, requires: e.requires }]),
      );
      expect(entries).toEqual({
        'universal/block.yaml': { id: 'block', track: undefined, requires: ['a/one', 'b_two'] },
        'universal/flow.yaml': { id: 'flow', track: 't', requires: undefined },
        'universal/inline.yaml': { id: 'inline', track: undefined, requires: ['a/one', 'b_two'] },
        'universal/last.yaml': { id: 'last', track: undefined, requires: ['c/one', 'd_two'] },
        'universal/odd.yaml': { id: 'folded_id', track: undefined, requires: undefined },
        'universal/plain.yaml': { id: 'plain_one', track: 'core', requires: undefined },
        'universal/quoted.yaml': { id: 'quoted', track: 'security', requires: undefined },
        // A broken file that still shows its id and phases in plain lines stays selectable; the loader reports it.
        'universal/broken.yaml': { id: 'broken', track: undefined, requires: undefined },
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('lists a file edited since it was listed as it is now (a file is read once while it stays the same)', () => {
    const root = testDir('adcp-list-');
    mkdirSync(join(root, 'universal'));
    const file = join(root, 'universal', 'edited.yaml');
    writeFileSync(file, 'id: before\nphases: []\n');
    expect(listCorpus(root).map((e) => e.id)).toEqual(['before']);
    // Another size, then the same size with another modification time.
    writeFileSync(file, 'id: after_it\nphases: []\n');
    expect(listCorpus(root).map((e) => e.id)).toEqual(['after_it']);
    writeFileSync(file, 'id: again_it\nphases: []\n');
    utimesSync(file, new Date(), new Date(Date.now() + 5_000));
    expect(listCorpus(root).map((e) => e.id)).toEqual(['again_it']);
  });

  it('lists the 84 storyboards of 3.0.6', () => {
    expect(entries).toHaveLength(84);
  });

  it('selects by id, bundle and track', () => {
    expect(selectCorpus(installed, { storyboards: ['capability_discovery'] })).toEqual([
      join(installed, 'universal', 'capability-discovery.yaml'),
    ]);
    const universal = selectCorpus(installed, { bundles: ['universal'] });
    expect(universal.length).toBeGreaterThan(10);
    expect(universal.every((f) => f.includes('/universal/'))).toBe(true);
    const core = selectCorpus(installed, { tracks: ['core'] });
    expect(core).toContain(join(installed, 'universal', 'capability-discovery.yaml'));
    // A universal storyboard's file name is a bundle id too, as in the reference CLI.
    expect(selectCorpus(installed, { bundles: ['idempotency'] })).toEqual([
      join(installed, 'universal', 'idempotency.yaml'),
    ]);
  });

  it('selects the union of every name, across ids, bundles and tracks (a track never narrows a list of ids)', () => {
    const id = selectCorpus(installed, { storyboards: ['capability_discovery'] });
    const core = selectCorpus(installed, { tracks: ['core'] });
    const idempotency = selectCorpus(installed, { bundles: ['idempotency'] });
    expect(core.length).toBeGreaterThan(1);
    expect(selectCorpus(installed, { storyboards: ['capability_discovery'], tracks: ['core'] })).toEqual(
      [...new Set([...id, ...core])].sort(),
    );
    expect(selectCorpus(installed, { storyboards: ['capability_discovery'], bundles: ['idempotency'] })).toEqual(
      [...id, ...idempotency].sort(),
    );
  });

  it("picks one file per id: the protocol bundle's, never its domains/ mirror", () => {
    const files = selectCorpus(installed, { storyboards: ['creative_lifecycle'] });
    expect(files).toEqual([join(installed, 'protocols', 'creative', 'index.yaml')]);
    expect(entries.filter((e) => e.id === 'creative_lifecycle')).toHaveLength(2);
  });

  it('adds the scenarios a selected storyboard requires, wherever they live (as the reference runner does)', () => {
    const specialism = selectCorpus(installed, { bundles: ['sales-guaranteed'] }).map((f) =>
      f.slice(installed.length + 1),
    );
    expect(specialism).toContain('specialisms/sales-guaranteed/index.yaml');
    expect(specialism).toContain('protocols/media-buy/scenarios/refine_products.yaml');
    const required = entries.find((e) => e.path === 'specialisms/sales-guaranteed/index.yaml')!.requires!;
    expect(required.length).toBeGreaterThan(3);
    expect(specialism.filter((f) => !f.startsWith('specialisms/sales-guaranteed/'))).toHaveLength(required.length);
  });

  it('warns about a required scenario the corpus lacks, and selects the rest', () => {
    const tree = mkdtempSync(join(tmpdir(), 'vitest-adcp-corpus-'));
    try {
      mkdirSync(join(tree, 'universal'));
      writeFileSync(
        join(tree, 'universal', 'a.yaml'),
        'id: a\ntitle: A\nrequires_scenarios: [b/there, b/missing]\nphases: []\n',
      );
      writeFileSync(join(tree, 'universal', 'b.yaml'), 'id: b/there\ntitle: B\nphases: []\n');
      const warnings: string[] = [];
      expect(selectCorpus(tree, { storyboards: ['a'] }, { warn: (m) => warnings.push(m) })).toEqual([
        join(tree, 'universal', 'a.yaml'),
        join(tree, 'universal', 'b.yaml'),
      ]);
      expect(warnings).toEqual([
        'universal/a.yaml requires scenario "b/missing", which this compliance corpus does not have; it is not run.',
      ]);
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });

  it('names what it does not know, what was probably meant, and what exists', () => {
    let error: unknown;
    try {
      selectCorpus(installed, {
        storyboards: ['no_such', 'capability_discovry', 'sales-guarnteed'],
        bundles: ['nope', 'media_buy'],
        tracks: ['cor'],
      });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(CorpusSelectionError);
    const message = (error as Error).message;
    expect(message).toMatch(/no storyboard "no_such"; /);
    expect(message).toMatch(/storyboard "capability_discovry" \(did you mean "capability_discovery"\?\)/);
    expect(message).toMatch(/storyboard "sales-guarnteed" \(did you mean bundle "sales-guaranteed"\?\)/);
    expect(message).toMatch(/bundle "nope" \(known: universal, .*media-buy/);
    expect(message).toMatch(/bundle "media_buy" \(did you mean "media-buy"\?\)/);
    expect(message).toMatch(/track "cor" \(did you mean "core"\?\) \(known: core, /);
  });
});

describe('run configuration from options and environment', () => {
  it('falls back to ADCP_* variables, options win', () => {
    const env = { ADCP_AGENT_URL: 'http://127.0.0.1:1/mcp', ADCP_AUTH_TOKEN: 't', ADCP_PROTOCOL: 'MCP' };
    expect(resolveRuntimeConfig({}, env)).toMatchObject({
      agentUrl: 'http://127.0.0.1:1/mcp',
      authToken: 't',
      protocol: 'mcp',
      timeoutMs: 30000,
    });
    expect(resolveRuntimeConfig({ agentUrl: 'http://other/mcp', authToken: 'o' }, env)).toMatchObject({
      agentUrl: 'http://other/mcp',
      authToken: 'o',
    });
    expect(resolveRuntimeConfig({}, env).error).toBeUndefined();
    const a2a = resolveRuntimeConfig({}, { ...env, ADCP_PROTOCOL: 'a2a', ADCP_AGENT_URL: 'http://127.0.0.1:1/a2a' });
    expect([a2a.protocol, a2a.error]).toEqual(['a2a', undefined]);
    expect(resolveRuntimeConfig({ protocol: 'mcp' }, { ...env, ADCP_PROTOCOL: 'a2a' }).protocol).toBe('mcp');
  });

  it('runner contracts: rate_limit_trip_runner only when asked for (option or ADCP_RATE_LIMIT_TRIP=1)', () => {
    const env = { ADCP_AGENT_URL: 'http://127.0.0.1:1/mcp' };
    expect(resolveRuntimeConfig({}, env).runnerContracts).toEqual({ rate_limit_trip_runner: false });
    expect(resolveRuntimeConfig({}, { ...env, ADCP_RATE_LIMIT_TRIP: '1' }).runnerContracts).toEqual({
      rate_limit_trip_runner: true,
    });
    expect(
      resolveRuntimeConfig(
        { runnerContracts: { rate_limit_trip_runner: false, parallel_dispatch_runner: false } },
        { ...env, ADCP_RATE_LIMIT_TRIP: '1' },
      ).runnerContracts,
    ).toEqual({ rate_limit_trip_runner: false, parallel_dispatch_runner: false });
  });

  it('runner contracts: parallel_dispatch_runner in scope unless the option or ADCP_PARALLEL_DISPATCH=0 says not', () => {
    const env = { ADCP_AGENT_URL: 'http://127.0.0.1:1/mcp' };
    for (const off of ['0', 'false', 'NO'])
      expect(resolveRuntimeConfig({}, { ...env, ADCP_PARALLEL_DISPATCH: off }).runnerContracts).toEqual({
        rate_limit_trip_runner: false,
        parallel_dispatch_runner: false,
      });
    for (const on of ['1', '', 'off'])
      expect(resolveRuntimeConfig({}, { ...env, ADCP_PARALLEL_DISPATCH: on }).runnerContracts).toEqual({
        rate_limit_trip_runner: false,
      });
    expect(
      resolveRuntimeConfig(
        { runnerContracts: { parallel_dispatch_runner: true } },
        { ...env, ADCP_PARALLEL_DISPATCH: '0' },
      ).runnerContracts,
    ).toEqual({ rate_limit_trip_runner: false, parallel_dispatch_runner: true });
  });

  it('turns a missing or bad setting into a message that says what to do', () => {
    expect(resolveRuntimeConfig({}, {}).error).toMatch(/no agent to test: set ADCP_AGENT_URL/);
    expect(resolveRuntimeConfig({}, { ADCP_AGENT_URL: 'localhost:3000' }).error).toMatch(/not an http\(s\) URL/);
    expect(resolveRuntimeConfig({}, { ADCP_AGENT_URL: 'http://x/mcp', ADCP_PROTOCOL: 'grpc' }).error).toMatch(
      /use "mcp" or "a2a"/,
    );
  });
});
