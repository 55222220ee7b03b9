/**
 * Every path that opens a storyboard file checks the byte bound before reading it (issue 31, item 6): the loader, the
 * bin's selection (its `--list` and `printSelection` print what `explainSelection` says), `listCorpus` (the plugin's and
 * the Jest preset's corpus selection), the plugin's run host, and the Jest transformer. Each file here is just over a
 * bound and is not YAML past its first lines: a path that read and parsed it whole would answer with a parse error (or
 * no id), not with the bound — so the bound's answer proves the check came first.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { explainSelection } from '../../src/cli/selection.js';
import { createState } from '../../src/plugin/state.js';
import { loadErrors, loadForRun } from '../../src/plugin/storyboard-modules.js';
import { DEFAULT_STORYBOARD_BOUNDS } from '../../src/storyboard/bounds.js';
import { formatDiagnostic } from '../../src/storyboard/diagnostics.js';
import { loadStoryboardFile } from '../../src/storyboard/load.js';
import { readStoryboardFile, readStoryboardHead } from '../../src/storyboard/read.js';
import { listCorpus } from '../../src/storyboard/select.js';
import { builtDist } from '../helpers/built.js';

const HEAD =
  'id: big_one\nversion: "1.0.0"\ntitle: T\ncategory: x\nsummary: s\nnarrative: n\ntrack: core\nagent:\n  interaction_model: media_buy_seller\ncaller:\n  role: buyer_agent\nphases:\n  - id: p\n    title: P\n    steps:\n      - { id: s, title: S, task: get_products }\n';
/** Not YAML: an unclosed flow sequence, then tabs where indentation goes. */
const NOT_YAML = 'x-broken: [ "\n\t\t: : {\n';

let dir: string;
/** Over the default byte bound (512 KiB), its tail not YAML. */
let overDefault: string;
/** 2,000 bytes: over a configured `maxBytes: 1000`, not YAML past the head. */
let overConfigured: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-read-bounded-'));
  overDefault = join(dir, 'big.storyboard.yaml');
  writeFileSync(overDefault, HEAD + NOT_YAML + '#'.repeat(DEFAULT_STORYBOARD_BOUNDS.maxBytes));
  overConfigured = join(dir, 'small.storyboard.yaml');
  writeFileSync(overConfigured, (HEAD + NOT_YAML).padEnd(2000, '#'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const BOUND_AT_START =
  /small\.storyboard\.yaml:1:1: \[storyboard_bound\] the storyboard file is 2000 bytes, over the bound maxBytes = 1000 bytes/;

describe('the loader', () => {
  it('readStoryboardFile: over the configured bound, nothing read, the located bound error with the size', () => {
    const read = readStoryboardFile(overConfigured, { maxBytes: 1000 });
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.oversize).toBe(2000);
    expect(read.diagnostics.map(formatDiagnostic)).toEqual([expect.stringMatching(BOUND_AT_START)]);
    // Under a bound it fits, the same file is read, and is not YAML.
    expect(readStoryboardFile(overConfigured, { maxBytes: 4000 }).ok).toBe(true);
    expect(loadStoryboardFile(overConfigured, { bounds: { maxBytes: 4000 } }).diagnostics[0]?.rule).toBe('yaml_syntax');
  });

  it('loadStoryboardFile: the bound error, not a YAML syntax error', () => {
    const loaded = loadStoryboardFile(overConfigured, { bounds: { maxBytes: 1000 } });
    expect(loaded.diagnostics.map(formatDiagnostic)).toEqual([expect.stringMatching(BOUND_AT_START)]);
  });

  it('readStoryboardHead: of a file over the default bound, only its first maxBytes bytes', () => {
    const head = readStoryboardHead(overDefault);
    expect(head.whole).toBe(false);
    expect(head.text.length).toBe(DEFAULT_STORYBOARD_BOUNDS.maxBytes);
    expect(readStoryboardHead(overConfigured)).toEqual({ text: expect.stringMatching(/^id: big_one/), whole: true });
  });
});

describe("the bin's selection (--list, printSelection, the run's first line)", () => {
  it('a named file over the bound: its id from its head, not "-" from a parse of the whole file', () => {
    const selection = explainSelection({
      storyboards: [],
      bundles: [],
      tracks: [],
      files: [{ given: 'big.storyboard.yaml', file: overDefault }],
      sequential: false,
    });
    expect(selection.storyboards).toEqual([
      { file: overDefault, id: 'big_one', reasons: ['--storyboards big.storyboard.yaml'] },
    ]);
  });
});

describe('listCorpus (the corpus selection of the plugin, the Jest preset and the bin)', () => {
  it('a corpus file over the bound is listed from its head, never parsed whole', () => {
    const root = join(dir, 'corpus');
    mkdirSync(join(root, 'universal'), { recursive: true });
    // `requires_scenarios` in flow style: a file under the bound is parsed whole for it; this one must not be.
    writeFileSync(
      join(root, 'universal', 'big.yaml'),
      `${HEAD}requires_scenarios: [other]\n${NOT_YAML}${'#'.repeat(DEFAULT_STORYBOARD_BOUNDS.maxBytes)}`,
    );
    writeFileSync(join(root, 'universal', 'other.yaml'), HEAD.replace('big_one', 'other'));
    expect(listCorpus(root).map((entry) => [entry.id, entry.path, entry.track])).toEqual([
      ['big_one', 'universal/big.yaml', 'core'],
      ['other', 'universal/other.yaml', 'core'],
    ]);
  });

  it('a file over the anchor bound is not parsed for its keys', () => {
    const root = join(dir, 'anchors');
    mkdirSync(join(root, 'universal'), { recursive: true });
    // 20,000 anchors (under the byte bound) and a quoted id: parsed whole, this took seconds.
    const anchors = `x-many: [${Array.from({ length: 20_000 }, (_, i) => `&a${i} ${i}`).join(', ')}]\n`;
    writeFileSync(join(root, 'universal', 'anchors.yaml'), `${HEAD.replace('id: big_one', 'id: "a b"')}${anchors}`);
    // Parsed, its quoted id would be read and the file listed; the line scan cannot read it, and lists nothing.
    expect(listCorpus(root)).toEqual([]);
  });
});

describe("the plugin's run host", () => {
  it('loadForRun and loadErrors: over the configured bound, the bound error, unread', () => {
    const state = createState({ storyboardBounds: { maxBytes: 1000 } });
    expect(loadForRun(state, overConfigured)).toBeUndefined();
    expect(loadErrors(state, overConfigured).map(formatDiagnostic)).toEqual([expect.stringMatching(BOUND_AT_START)]);
    expect(state.recentCompiles.size).toBe(0);
  });
});

describe('the Jest transformer', () => {
  it('a corpus stub naming a file over the configured bound: the module of its one load failure, the file unread', async () => {
    const require = createRequire(import.meta.url);
    const { createTransformer } = require(join(await builtDist(), 'jest', 'transformer.cjs')) as {
      createTransformer(options: object): {
        process(text: string, path: string, options: { config: { rootDir: string } }): { code: string };
      };
    };
    const transformer = createTransformer({ storyboardBounds: { maxBytes: 1000 } });
    const stub = `# vitest-adcp corpus storyboard: ${overConfigured}\n`;
    const { code } = transformer.process(stub, join(dir, 'stub.test.yaml'), { config: { rootDir: dir } });
    expect(code).toContain('loads without errors (storyboard_bound)');
    expect(code).toMatch(/the storyboard file is 2000 bytes, over the bound maxBytes = 1000 bytes/);
  }, 240_000);
});
