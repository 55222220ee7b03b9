import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CorpusNotFoundError, resolveCorpus } from '../src/corpus.js';
import { resolveRuntimeConfig } from '../src/config.js';
import { CorpusSelectionError, listCorpus, selectCorpus } from '../src/plugin/select.js';

const repo = join(import.meta.dirname, '..');
const installed = join(repo, 'node_modules', '@adcp', 'sdk', 'compliance', 'cache', '3.0.6');

describe('ADCP_COMPLIANCE: finding the corpus', () => {
  it('defaults to the newest version in the installed @adcp/sdk, with its schemas', () => {
    const corpus = resolveCorpus(undefined, repo);
    expect(corpus).toMatchObject({ root: installed, version: '3.0.6', schemasDir: expect.stringMatching(/schemas-data\/3\.0$/) });
  });

  it('takes a version or a path', () => {
    expect(resolveCorpus('3.0.6', repo).root).toBe(installed);
    expect(resolveCorpus(installed, repo)).toMatchObject({ root: installed, version: '3.0.6' });
    expect(resolveCorpus('./node_modules/@adcp/sdk/compliance/cache/3.0.6', repo).root).toBe(installed);
  });

  it('says what exists when the version or path is wrong', () => {
    expect(() => resolveCorpus('9.9.9', repo)).toThrow(new CorpusNotFoundError('AdCP compliance version "9.9.9" is not in the installed @adcp/sdk (it has: 3.0.6). Set ADCP_COMPLIANCE to one of those, or to a path.'));
    expect(() => resolveCorpus('/nowhere/at/all', repo)).toThrow(/not a compliance tree .* Point it at a folder like/);
  });
});

describe('selecting corpus storyboards', () => {
  it('lists the 84 storyboards of 3.0.6', () => {
    expect(listCorpus(installed)).toHaveLength(84);
  });

  it('selects by id, bundle and track', () => {
    expect(selectCorpus(installed, { storyboards: ['capability_discovery'] })).toEqual([join(installed, 'universal', 'capability-discovery.yaml')]);
    const universal = selectCorpus(installed, { bundles: ['universal'] });
    expect(universal.length).toBeGreaterThan(10);
    expect(universal.every((f) => f.includes('/universal/'))).toBe(true);
    const core = selectCorpus(installed, { tracks: ['core'] });
    expect(core).toContain(join(installed, 'universal', 'capability-discovery.yaml'));
    const specialism = selectCorpus(installed, { bundles: ['sales-guaranteed'] });
    expect(specialism.every((f) => f.includes('/specialisms/sales-guaranteed/'))).toBe(true);
  });

  it('names what it does not know and what it does', () => {
    expect(() => selectCorpus(installed, { storyboards: ['no_such'], bundles: ['nope'] })).toThrow(CorpusSelectionError);
    expect(() => selectCorpus(installed, { bundles: ['nope'] })).toThrow(/bundle "nope" \(known: universal, .*media-buy/);
  });
});

describe('run configuration from options and environment', () => {
  it('falls back to ADCP_* variables, options win', () => {
    const env = { ADCP_AGENT_URL: 'http://127.0.0.1:1/mcp', ADCP_AUTH_TOKEN: 't', ADCP_PROTOCOL: 'MCP' };
    expect(resolveRuntimeConfig({}, env)).toMatchObject({ agentUrl: 'http://127.0.0.1:1/mcp', authToken: 't', protocol: 'mcp', timeoutMs: 30000 });
    expect(resolveRuntimeConfig({ agentUrl: 'http://other/mcp', authToken: 'o' }, env)).toMatchObject({ agentUrl: 'http://other/mcp', authToken: 'o' });
    expect(resolveRuntimeConfig({}, env).error).toBeUndefined();
  });

  it('turns a missing or bad setting into a message that says what to do', () => {
    expect(resolveRuntimeConfig({}, {}).error).toMatch(/no agent to test: set ADCP_AGENT_URL/);
    expect(resolveRuntimeConfig({}, { ADCP_AGENT_URL: 'localhost:3000' }).error).toMatch(/not an http\(s\) URL/);
    expect(resolveRuntimeConfig({}, { ADCP_AGENT_URL: 'http://x/mcp', ADCP_PROTOCOL: 'grpc' }).error).toMatch(/use "mcp" or "a2a"/);
  });
});
