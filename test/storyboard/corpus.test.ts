/**
 * Every storyboard of every corpus version cached in @adcp/sdk (3.0.6 and
 * 3.0.6.previous) and the 3.1.0-rc.2 security_baseline must load without a
 * single diagnostic — under the default strictKeys, so the format's keys and
 * checks are learnt from the corpus and storyboard-schema.yaml, not relaxed.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isStoryboardSource, loadStoryboardFile, formatDiagnostic } from '../../src/storyboard/index.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cache = path.join(repo, 'node_modules/@adcp/sdk/compliance/cache');
const corpusRoot = path.join(cache, '3.0.6');
const versions = readdirSync(cache).sort();
// The 3.1.0-rc.2 text, kept as test input (fixtures/spec/README.md).
const rc2Security = path.join(repo, 'fixtures', 'spec', 'security-3.1.0-rc.2.yaml');

function yamlFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory())
      return entry.name === 'test-kits' || entry.name === 'test-vectors' ? [] : yamlFilesUnder(full);
    return entry.name.endsWith('.yaml') ? [full] : [];
  });
}

const allYaml = yamlFilesUnder(corpusRoot).sort();
const storyboardFiles = [...allYaml.filter((f) => isStoryboardSource(readFileSync(f, 'utf8'), f)), rc2Security];
const relative = (f: string) => (f.startsWith(corpusRoot) ? path.relative(corpusRoot, f) : f);
/** The other cached versions' storyboards, each loaded against its own tree. */
const otherVersions = versions
  .filter((v) => v !== '3.0.6')
  .flatMap((version) =>
    yamlFilesUnder(path.join(cache, version))
      .filter((f) => isStoryboardSource(readFileSync(f, 'utf8'), f))
      .sort()
      .map((f) => ({ version, file: path.relative(path.join(cache, version), f) })),
  );

describe(`AdCP compliance corpus (${storyboardFiles.length} storyboard files)`, () => {
  it('recognises exactly the non-storyboard YAML files of universal/', () => {
    const skipped = allYaml.filter((f) => !storyboardFiles.includes(f)).map(relative);
    // The format description (comments only), the runner output contract and
    // the fictional-entity catalogue are not storyboards.
    expect(skipped).toEqual([
      'universal/fictional-entities.yaml',
      'universal/runner-output-contract.yaml',
      'universal/storyboard-schema.yaml',
    ]);
  });

  it.each(storyboardFiles.map(relative))('%s loads without diagnostics', (file) => {
    const result = loadStoryboardFile(path.isAbsolute(file) ? file : path.join(corpusRoot, file), { corpusRoot });
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([]);
    expect(result.ok).toBe(true);
  });

  it('caches the versions this test expects', () => {
    expect(versions).toEqual(['3.0.6', '3.0.6.previous']);
    expect(otherVersions).toHaveLength(84);
  });

  it.each(otherVersions.map(({ version, file }) => [version, file]))(
    '%s: %s loads without diagnostics',
    (version, file) => {
      const root = path.join(cache, version);
      const result = loadStoryboardFile(path.join(root, file), { corpusRoot: root });
      expect(result.diagnostics.map(formatDiagnostic)).toEqual([]);
      expect(result.ok).toBe(true);
    },
  );

  it('totals', () => {
    const started = performance.now();
    let steps = 0;
    let validations = 0;
    for (const file of storyboardFiles) {
      const result = loadStoryboardFile(file, { corpusRoot });
      if (!result.ok) throw new Error(`${file} failed to load`);
      for (const phase of result.storyboard.phases) {
        steps += phase.steps.length;
        for (const step of phase.steps) validations += step.validations.length;
      }
    }
    const ms = performance.now() - started;
    console.log(
      `corpus: ${storyboardFiles.length} storyboard files, ${steps} steps, ${validations} validations, loaded in ${ms.toFixed(0)} ms`,
    );
    expect(storyboardFiles.length).toBe(85); // 84 from 3.0.6 + security 3.1.0-rc.2
    expect(steps).toBeGreaterThan(500);
  });

  it('loads the 3.1.0-rc.2 security storyboard with its Basic-auth phase', () => {
    const result = loadStoryboardFile(rc2Security, { corpusRoot });
    if (!result.ok) throw new Error('did not load');
    const basic = result.storyboard.phases.find((p) => p.id === 'basic_path')!;
    expect(basic.steps[0]!.auth).toEqual({ type: 'basic', from_test_kit: 'auth.basic' });
    expect(basic.steps.find((s) => s.contributes)?.contributes_to).toBe('auth_mechanism_verified');
  });
});
