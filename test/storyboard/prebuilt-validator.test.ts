/**
 * The storyboard schema's validator as the build compiles it ahead (scripts/build-storyboard-validator.mjs, in this
 * run's shared build): used only when built from the schema text the loader reads, and it judges every storyboard as
 * ajv's compile of the same schema does — the same verdict and the same errors (paths, params, the sub-schemas the
 * hints quote) on every broken fixture and on the corpus.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  loaderSchema,
  prebuiltValidator,
  STORYBOARD_VALIDATOR_OPTIONS,
  storyboardSchemaDigest,
} from '../../src/storyboard/schema.js';
import { builtDist } from '../helpers/built.js';
import { repoRoot } from '../helpers/once-per-run.js';

let built: URL;
let scratch: string;

beforeAll(async () => {
  built = pathToFileURL(join(await builtDist(), 'storyboard', 'storyboard-validator.cjs'));
  scratch = mkdtempSync(join(tmpdir(), 'vitest-adcp-prebuilt-'));
}, 240_000);
afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/**
 * Every YAML document under the broken fixtures, ours, and the whole installed 3.0.6 corpus tree — not only its
 * storyboards (listCorpus): its test kits and other files are the documents the schema rejects, in many shapes.
 */
function documents(): { name: string; data: unknown }[] {
  const corpus = join(repoRoot, 'node_modules', '@adcp', 'sdk', 'compliance', 'cache', '3.0.6');
  const dirs = [join(repoRoot, 'fixtures', 'broken'), join(repoRoot, 'fixtures', 'storyboards'), corpus];
  const out: { name: string; data: unknown }[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.yaml')) {
        try {
          out.push({ name: path, data: parse(readFileSync(path, 'utf8')) });
        } catch {
          // Not YAML the loader would get past (the alias bomb): nothing for the schema to judge.
        }
      }
    }
  };
  dirs.forEach(walk);
  return out;
}

describe('the prebuilt storyboard validator', () => {
  it('is used when built from this schema text, and not when the text differs, nor when absent', () => {
    expect(prebuiltValidator(built, storyboardSchemaDigest())).toBeTypeOf('function');
    expect(prebuiltValidator(built, 'a'.repeat(64))).toBeUndefined();
    expect(prebuiltValidator(pathToFileURL(join(scratch, 'none.cjs')), storyboardSchemaDigest())).toBeUndefined();
  });

  it('is not used when it exports no validator', () => {
    const file = join(scratch, 'empty.cjs');
    writeFileSync(file, `module.exports.schemaDigest = ${JSON.stringify(storyboardSchemaDigest())};\n`);
    expect(prebuiltValidator(pathToFileURL(file), storyboardSchemaDigest())).toBeUndefined();
  });

  it('gives the verdicts and errors a fresh compile gives, on every broken fixture and corpus storyboard', () => {
    const prebuilt = prebuiltValidator(built, storyboardSchemaDigest())!;
    const fresh = new Ajv(STORYBOARD_VALIDATOR_OPTIONS).compile(loaderSchema());
    const docs = documents();
    expect(docs.length).toBeGreaterThan(100);
    let failing = 0;
    for (const { name, data } of docs) {
      const verdict = fresh(data);
      expect(prebuilt(data), name).toBe(verdict);
      expect(prebuilt.errors ?? null, name).toEqual(fresh.errors ?? null);
      if (!verdict) failing++;
    }
    // Documents the schema rejects among them (the corpus's test kits, a broken fixture): failures compared, not only passes.
    expect(failing).toBeGreaterThan(5);
  });
});
