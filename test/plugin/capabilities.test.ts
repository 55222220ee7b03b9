/**
 * Capability-driven selection: the same storyboards the reference CLI chooses
 * for a declaration (it is the reference's own resolver, called on our corpus),
 * its fail-closed cases turned into warnings, and the agent asked over a real
 * socket.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveStoryboardsForCapabilities } from '@adcp/sdk/testing';
import { describe, expect, inject, it } from 'vitest';
import { DiskCache } from '../../src/cache/disk-cache.js';
import { resolveCorpus } from '../../src/corpus.js';
import {
  AgentUnreachableError,
  readAgentCapabilities,
  storyboardIdsForAgent,
  storyboardIdsForCapabilities,
  type DeclaredCapabilities,
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

async function select(capabilities: DeclaredCapabilities): Promise<{ ids: string[]; warnings: string[] }> {
  const warnings: string[] = [];
  const ids = await storyboardIdsForCapabilities(root, capabilities, { fromDir: repo, warn: (m) => warnings.push(m) });
  return { ids, warnings };
}

describe('storyboardIdsForCapabilities', () => {
  it.each<DeclaredCapabilities>([
    {},
    { supported_protocols: ['media_buy'] },
    {
      supported_protocols: ['media_buy', 'creative', 'signals'],
      specialisms: ['sales-guaranteed', 'signal-marketplace'],
    },
  ])('chooses what the reference chooses for %j, without a warning', async (capabilities) => {
    const { ids, warnings } = await select(capabilities);
    expect(ids).toEqual(reference(capabilities));
    expect(ids).toContain('capability_discovery');
    expect(warnings).toEqual([]);
  });

  it('turns the ids into the files the reference runs: their scenarios included, no domains/ duplicates', async () => {
    const capabilities = { supported_protocols: ['media_buy'], specialisms: ['sales-guaranteed'] };
    const files = selectCorpus(root, { storyboards: (await select(capabilities)).ids });
    const idOf = new Map(listCorpus(root).map((e) => [e.file, e.id]));
    const expected = resolveStoryboardsForCapabilities(capabilities, { complianceDir: root }).storyboards.flatMap(
      (s) => [s.id, ...(s.requires_scenarios ?? [])],
    );
    expect(files.map((f) => idOf.get(f)).sort()).toEqual([...new Set(expected)].sort());
    expect(files.some((f) => f.includes('/domains/'))).toBe(false);
  });

  it('warns about a specialism the corpus does not know, and assesses the rest', async () => {
    const { ids, warnings } = await select({
      supported_protocols: ['media_buy'],
      specialisms: ['holographic-ads', 'sales-guaranteed'],
    });
    expect(ids).toEqual(reference({ supported_protocols: ['media_buy'], specialisms: ['sales-guaranteed'] }));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /the agent declares specialism "holographic-ads", which the AdCP 3\.0\.6 compliance corpus does not know \(it knows .*sales-guaranteed/,
    );
  });

  it('warns about a specialism whose protocol is not declared (where the reference throws), and assesses the rest', async () => {
    const { ids, warnings } = await select({ supported_protocols: ['creative'], specialisms: ['sales-guaranteed'] });
    expect(ids).toEqual(reference({ supported_protocols: ['creative'] }));
    expect(warnings).toEqual([
      'the agent declares specialism "sales-guaranteed" but not its protocol "media-buy" in supported_protocols (every specialism rolls up to a declared protocol); its storyboards are not run.',
    ]);
  });

  it("passes the reference's warning about an unknown protocol on once, even when it has to ask twice", async () => {
    const { ids, warnings } = await select({
      supported_protocols: ['creative', 'telepathy'],
      specialisms: ['sales-guaranteed'],
    });
    expect(ids).toEqual(reference({ supported_protocols: ['creative'] }));
    expect(warnings.filter((w) => w.includes('"telepathy"'))).toHaveLength(1);
    expect(warnings).toHaveLength(2);
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
    const ids = await storyboardIdsForAgent(access(url), root, { fromDir: repo, warn: (m) => warnings.push(m) });
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

describe('the selection kept between runs (cacheDir)', () => {
  const withCache = async (cacheDir: string, capabilities: DeclaredCapabilities) => {
    const warnings: string[] = [];
    const ids = await storyboardIdsForCapabilities(root, capabilities, {
      fromDir: repo,
      cacheDir,
      warn: (m) => warnings.push(m),
    });
    return { ids, warnings };
  };
  const entries = (cacheDir: string) =>
    existsSync(join(cacheDir, 'selections')) ? readdirSync(join(cacheDir, 'selections')) : [];

  it('gives the same ids and the same warnings from the cache, one entry per declaration', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'adcp-selection-'));
    try {
      const declared = { supported_protocols: ['media_buy'], specialisms: ['sales-guaranteed', 'no-such-specialism'] };
      const first = await withCache(cacheDir, declared);
      expect(first.warnings).toEqual([expect.stringContaining('"no-such-specialism"')]);
      expect(entries(cacheDir)).toHaveLength(1);
      expect(await withCache(cacheDir, declared)).toEqual(first);
      expect(first).toEqual(await select(declared));
      await withCache(cacheDir, { supported_protocols: ['signals'] });
      expect(entries(cacheDir)).toHaveLength(2);
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });

  it('is what the next run reads (an entry changed on disk is what it gets), and a broken entry is selected again', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'adcp-selection-'));
    try {
      const declared = { supported_protocols: ['media_buy'] };
      const { ids } = await withCache(cacheDir, declared);
      const [entry] = entries(cacheDir);
      const file = join(cacheDir, 'selections', entry!);
      // Planted beside ours: not read. Written through the cache (this user's secret): read.
      writeFileSync(file, JSON.stringify({ ids: ['planted'], warnings: ['planted warning'] }));
      expect((await withCache(cacheDir, declared)).ids).toEqual(ids);
      new DiskCache(cacheDir, 'selections', '.json', []).write(
        entry!.replace(/\.json$/, ''),
        JSON.stringify({ ids: ['planted'], warnings: ['planted warning'] }),
      );
      expect(await withCache(cacheDir, declared)).toEqual({ ids: ['planted'], warnings: ['planted warning'] });
      writeFileSync(file, '{ not json');
      expect((await withCache(cacheDir, declared)).ids).toEqual(ids);
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });
});
