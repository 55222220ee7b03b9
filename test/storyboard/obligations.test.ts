/**
 * What a declaration obligates, read from a compliance tree's index.json (storyboard/obligations.ts): the cases the
 * installed corpus does not have — a protocol listed without a baseline, a legacy protocol claim, a specialism that
 * became universal, claims made twice — on a small tree of our own. The same choice as the reference's on the real
 * corpus, declaration by declaration: test/plugin/capabilities.test.ts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/model/errors.js';
import { obligations } from '../../src/storyboard/obligations.js';
import { testDir } from '../helpers/temp-dir.js';

function tree(index: unknown): string {
  const root = testDir('adcp-obligations-');
  writeFileSync(join(root, 'index.json'), JSON.stringify(index));
  return root;
}

const index = {
  adcp_version: '9.9.0',
  universal: ['capability-discovery', 'signed-requests'],
  protocols: [
    { id: 'media-buy', has_baseline: true },
    { id: 'sponsored-intelligence', has_baseline: true },
    { id: 'measurement', has_baseline: false },
  ],
  specialisms: [
    { id: 'sales-guaranteed', protocol: 'media-buy' },
    { id: 'si-chat', protocol: 'sponsored-intelligence' },
    { id: 'attribution', protocol: 'measurement' },
  ],
};

describe('obligations', () => {
  it('is every universal storyboard, then the declared protocols, then the declared specialisms, in the order declared', () => {
    const owed = obligations(tree(index), {
      supported_protocols: ['sponsored_intelligence', 'media_buy'],
      specialisms: ['sales-guaranteed', 'si-chat'],
    });
    expect(owed.bundles).toEqual([
      { id: 'capability-discovery', path: 'universal/capability-discovery.yaml' },
      { id: 'signed-requests', path: 'universal/signed-requests.yaml' },
      { id: 'sponsored-intelligence', path: 'protocols/sponsored-intelligence/' },
      { id: 'media-buy', path: 'protocols/media-buy/' },
      { id: 'sales-guaranteed', path: 'specialisms/sales-guaranteed/' },
      { id: 'si-chat', path: 'specialisms/si-chat/' },
    ]);
    expect(owed).toMatchObject({ protocolsWithoutBaseline: [], unknownSpecialisms: [], orphanSpecialisms: [] });
    expect(owed.known).toEqual({
      protocols: ['media-buy', 'sponsored-intelligence', 'measurement'],
      specialisms: ['sales-guaranteed', 'si-chat', 'attribution'],
      version: '9.9.0',
    });
  });

  it('is only the universal storyboards for an agent that declares nothing', () => {
    expect(obligations(tree(index), {}).bundles.map((b) => b.id)).toEqual(['capability-discovery', 'signed-requests']);
  });

  it('names a declared protocol without a baseline, listed or unknown, once each; the legacy compliance_testing is no claim', () => {
    const owed = obligations(tree(index), {
      supported_protocols: ['measurement', 'telepathy', 'compliance_testing', 'telepathy', 'media_buy'],
    });
    expect(owed.protocolsWithoutBaseline).toEqual(['measurement', 'telepathy']);
    expect(owed.bundles.map((b) => b.id)).toEqual(['capability-discovery', 'signed-requests', 'media-buy']);
  });

  it('runs a specialism whose protocol is declared though it has no baseline, and not one whose protocol is not declared', () => {
    const owed = obligations(tree(index), {
      supported_protocols: ['measurement'],
      specialisms: ['attribution', 'sales-guaranteed', 'sales-guaranteed'],
    });
    expect(owed.bundles.map((b) => b.id)).toContain('attribution');
    expect(owed.orphanSpecialisms).toEqual([{ specialism: 'sales-guaranteed', protocol: 'media-buy' }]);
  });

  it('passes over a specialism that is a universal storyboard (run anyway), and names an unknown one once', () => {
    const owed = obligations(tree(index), {
      supported_protocols: ['media_buy'],
      specialisms: ['signed-requests', 'holographic-ads', 'holographic-ads'],
    });
    expect(owed.unknownSpecialisms).toEqual(['holographic-ads']);
    expect(owed.bundles.filter((b) => b.id === 'signed-requests')).toEqual([
      { id: 'signed-requests', path: 'universal/signed-requests.yaml' },
    ]);
  });

  it('takes a bundle declared twice once, at its first place', () => {
    const owed = obligations(tree(index), {
      supported_protocols: ['media_buy', 'sponsored_intelligence', 'media_buy'],
      specialisms: ['si-chat', 'sales-guaranteed', 'si-chat'],
    });
    expect(owed.bundles.map((b) => b.id).slice(2)).toEqual([
      'media-buy',
      'sponsored-intelligence',
      'si-chat',
      'sales-guaranteed',
    ]);
  });

  it('is a ConfigurationError naming the index and the ways forward when the tree has none', () => {
    const root = testDir('adcp-obligations-');
    const error = (() => {
      try {
        obligations(root, {});
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error?.message).toContain(`${join(root, 'index.json')} cannot be read`);
    expect(error?.message).toContain('name the storyboards to run');
  });
});
