/**
 * Capability-driven selection: the same storyboards, in the same order, as the reference CLI's resolver
 * (`resolveStoryboardsForCapabilities` of the installed @adcp/sdk, called on the same corpus) for each of the corpus's
 * protocols with its specialisms and for all of them, in both orders (bench/selection.mjs goes through every set of
 * protocols, on the corpora a clean clone does not have); its fail-closed cases turned into warnings; the agent asked
 * over a real socket.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveStoryboardsForCapabilities } from '@adcp/sdk/testing';
import { describe, expect, inject, it } from 'vitest';
import { resolveCorpus } from '../../src/corpus.js';
import {
  AgentUnreachableError,
  corpusVersionSupported,
  readAgentCapabilities,
  storyboardIdsForAgent,
  storyboardIdsForCapabilities,
  type DeclaredCapabilities,
  UnsupportedCorpusVersionError,
} from '../../src/plugin/capabilities.js';
import { listCorpus, selectCorpus } from '../../src/storyboard/select.js';
import { closedPort } from '../helpers/ports.js';

const repo = join(import.meta.dirname, '..', '..');
const root = resolveCorpus(undefined, repo).root;
const access = (url: string) => ({ url, timeoutMs: 5_000, maxResponseBytes: 1024 * 1024 });

function reference(capabilities: DeclaredCapabilities): string[] {
  return [
    ...new Set(resolveStoryboardsForCapabilities(capabilities, { complianceDir: root }).storyboards.map((s) => s.id)),
  ];
}

function select(capabilities: DeclaredCapabilities): { ids: string[]; warnings: string[] } {
  const warnings: string[] = [];
  const ids = storyboardIdsForCapabilities(root, capabilities, { warn: (m) => warnings.push(m) });
  return { ids, warnings };
}

describe('storyboardIdsForCapabilities', () => {
  // The corpus's own protocols and specialisms: nothing declared, each protocol with all its specialisms, then all
  // of them in the index's order and in reverse (the reference lists bundles in the order declared).
  const index = JSON.parse(readFileSync(join(root, 'index.json'), 'utf8')) as {
    protocols: { id: string }[];
    specialisms: { id: string; protocol: string }[];
  };
  const claim = (protocol: string) => protocol.replaceAll('-', '_');
  const specialismsOf = (protocols: string[]) =>
    index.specialisms.filter((s) => protocols.includes(s.protocol)).map((s) => s.id);
  const all = index.protocols.map((p) => p.id);
  it.each<DeclaredCapabilities>([
    {},
    ...all.map((p) => ({ supported_protocols: [claim(p)], specialisms: specialismsOf([p]) })),
    { supported_protocols: all.map(claim), specialisms: specialismsOf(all) },
    { supported_protocols: all.map(claim).reverse(), specialisms: specialismsOf(all).reverse() },
  ])('chooses what the reference chooses, in its order, for %j, without a warning', (capabilities) => {
    const { ids, warnings } = select(capabilities);
    expect(ids).toEqual(reference(capabilities));
    expect(ids).toContain('capability_discovery');
    expect(warnings).toEqual([]);
  });

  it('covers every protocol and specialism of the corpus (the cases above are not made from an empty index)', () => {
    expect(all).toHaveLength(6);
    expect(specialismsOf(all)).toHaveLength(index.specialisms.length);
    expect(index.specialisms.length).toBeGreaterThan(15);
  });

  it('turns the ids into the files the reference runs: their scenarios included, no domains/ duplicates', () => {
    const capabilities = { supported_protocols: ['media_buy'], specialisms: ['sales-guaranteed'] };
    const files = selectCorpus(root, { storyboards: select(capabilities).ids });
    const idOf = new Map(listCorpus(root).map((e) => [e.file, e.id]));
    const expected = resolveStoryboardsForCapabilities(capabilities, { complianceDir: root }).storyboards.flatMap(
      (s) => [s.id, ...(s.requires_scenarios ?? [])],
    );
    expect(files.map((f) => idOf.get(f)).sort()).toEqual([...new Set(expected)].sort());
    expect(files.some((f) => f.includes('/domains/'))).toBe(false);
  });

  it('warns about a specialism the corpus does not know, and assesses the rest', () => {
    const { ids, warnings } = select({
      supported_protocols: ['media_buy'],
      specialisms: ['holographic-ads', 'sales-guaranteed'],
    });
    expect(ids).toEqual(reference({ supported_protocols: ['media_buy'], specialisms: ['sales-guaranteed'] }));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /the agent declares specialism "holographic-ads", which the AdCP 3\.0\.6 compliance corpus does not know \(it knows .*sales-guaranteed/,
    );
  });

  it('warns about a specialism whose protocol is not declared (where the reference throws), and assesses the rest', () => {
    const { ids, warnings } = select({ supported_protocols: ['creative'], specialisms: ['sales-guaranteed'] });
    expect(ids).toEqual(reference({ supported_protocols: ['creative'] }));
    expect(warnings).toEqual([
      'the agent declares specialism "sales-guaranteed" but not its protocol "media-buy" in supported_protocols (every specialism rolls up to a declared protocol); its storyboards are not run.',
    ]);
  });

  it('warns once about a protocol the corpus has no baseline for, declared twice, and assesses the rest', () => {
    const { ids, warnings } = select({
      supported_protocols: ['creative', 'telepathy', 'telepathy'],
      specialisms: ['sales-guaranteed'],
    });
    expect(ids).toEqual(reference({ supported_protocols: ['creative'] }));
    expect(warnings).toEqual([
      'the agent declares protocol "telepathy" in supported_protocols, for which the AdCP 3.0.6 compliance corpus has no baseline (it has brand, creative, governance, media-buy, signals, sponsored-intelligence); nothing is run for it. A newer corpus may have one.',
      expect.stringContaining('specialism "sales-guaranteed" but not its protocol "media-buy"'),
    ]);
  });
});

describe('asking the agent', () => {
  it('reads the declared protocols and specialisms from get_adcp_capabilities', async () => {
    expect(await readAgentCapabilities(access(inject('agentUrl')))).toEqual({
      capabilities: { supported_protocols: ['media_buy', 'creative'], specialisms: [] },
    });
  });

  it('falls back to the universal storyboards, with a warning, when the agent answers without capabilities', async () => {
    const url = `${inject('agentOrigin')}/x/error_response@get_adcp_capabilities/mcp`;
    const warnings: string[] = [];
    const ids = await storyboardIdsForAgent(access(url), root, { warn: (m) => warnings.push(m) });
    expect(ids).toEqual(reference({}));
    expect(warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^get_adcp_capabilities at ${url.replace(/[.+?]/g, '\\$&')} answered without capabilities .*: only the universal storyboards are selected`,
        ),
      ),
    ]);
  });

  it('is an AgentUnreachableError naming the URL when nothing answers', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/mcp`;
    const error = await readAgentCapabilities(access(url)).catch((e) => e);
    expect(error).toBeInstanceOf(AgentUnreachableError);
    expect(error.message).toContain(`cannot ask the agent at ${url} for its capabilities`);
    expect(error.stack).toBe(`AgentUnreachableError: ${error.message}`);
  });
});

describe("the agent's adcp.supported_versions against the corpus version", () => {
  it.each<[string, string[], boolean]>([
    ['3.1.15', [], true],
    ['3.1.15', ['3.1'], true],
    ['3.1.15', ['3.0', '3.1'], true],
    ['3.1.15', ['3.1.10'], true],
    ['3.1.15', ['v3.1'], true],
    ['3.1.15', ['3.0'], false],
    ['3.1.15', ['3.10'], false],
    ['3.1.15', ['3.2', '3.0.6'], false],
    ['3.0.6', ['3.0'], true],
    ['3.0.6', ['3.1'], false],
    ['3.2.0-beta.5', ['3.2.0-beta.5'], true],
    ['3.2.0-beta.5', ['3.2-beta'], true],
    ['3.2.0-beta.5', ['3.2'], false],
    ['3.2.0-beta.5', ['3.2.0'], false],
    ['3.2.0', ['3.2-beta'], false],
  ])('corpus %s, agent %j: supported %s', (corpus, supported, expected) => {
    expect(corpusVersionSupported(corpus, supported)).toBe(expected);
  });

  it('reads them from get_adcp_capabilities (adcp.supported_versions)', async () => {
    const url = `${inject('agentOrigin')}/x/speaks_3_0+speaks_3_1/mcp`;
    expect((await readAgentCapabilities(access(url))).capabilities.supported_versions).toEqual(['3.0', '3.1']);
  });

  it("stops the selection with one line naming the corpus version, the agent's list and the ways forward", async () => {
    const url = `${inject('agentOrigin')}/x/speaks_3_1/mcp`;
    const error = await storyboardIdsForAgent(access(url), root).catch((e) => e);
    expect(error).toBeInstanceOf(UnsupportedCorpusVersionError);
    expect(error.message).toBe(
      'vitest-adcp cannot run the storyboards: the compliance corpus is AdCP 3.0.6, and the agent does not speak it (its get_adcp_capabilities declares adcp.supported_versions ["3.1"]). Name a corpus of a release it declares (--compliance-version / compliance.version / ADCP_COMPLIANCE, e.g. an @adcp/sdk that pins it), or run this one deliberately with --allow-unsupported-version (compliance.allowUnsupportedVersion, ADCP_ALLOW_UNSUPPORTED_VERSION=1).',
    );
    expect(error.message).not.toContain('\n');
  });

  it('selects as usual for an agent that speaks the release, and for one told to run anyway', async () => {
    const speaks = await storyboardIdsForAgent(access(`${inject('agentOrigin')}/x/speaks_3_0/mcp`), root);
    const anyway = await storyboardIdsForAgent(access(`${inject('agentOrigin')}/x/speaks_3_1/mcp`), root, {
      allowUnsupportedVersion: true,
    });
    expect(speaks).toEqual(reference({ supported_protocols: ['media_buy', 'creative'] }));
    expect(anyway).toEqual(speaks);
  });
});
