/**
 * The storyboards graded not applicable before the run (src/plugin/up-front.ts): the gate read from the file's header
 * (storyboard/select.ts `storyboardGate`), decided by the engine's own predicate code against the capabilities answer
 * capability selection read — the same detail the engine gives each step of such a storyboard — and a gate that cannot
 * be read there left to the run.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveCorpus } from '../../src/corpus.js';
import { capabilityUnmet } from '../../src/engine/applicability.js';
import { notApplicableUpFront } from '../../src/plugin/up-front.js';
import { DEFAULT_STORYBOARD_BOUNDS } from '../../src/storyboard/bounds.js';
import { storyboardGate, storyboardKeys } from '../../src/storyboard/select.js';
import { repoRoot } from '../helpers/run-vitest.js';

let dir: string;
let n = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-up-front-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PHASES =
  'phases:\n  - id: p\n    title: P\n    steps:\n      - { id: s, title: S, task: get_adcp_capabilities }\n';

/** A storyboard file: its id, title and track, then `header` (its gate), then its phases. */
function file(header: string, { id = `sb_${++n}`, title = '"A gated storyboard"' } = {}): string {
  const path = join(dir, `${id}.yaml`);
  writeFileSync(path, `id: ${id}\nversion: "1.2.0"\ntitle: ${title}\ntrack: core\n${header}${PHASES}`);
  return path;
}

const schemasDir = resolveCorpus(undefined, repoRoot).schemasDir;

describe("storyboardGate: a file's gate, read from its header", () => {
  it('a block predicate, with the title and version it is reported by', () => {
    const keys = storyboardGate(file('requires_capability:\n  path: media_buy.x   # why\n\n  equals: true\n'));
    expect(keys).toMatchObject({
      requires_capability: { path: 'media_buy.x', equals: true },
      title: 'A gated storyboard',
      version: '1.2.0',
    });
  });

  it('a flow predicate, and a title written over two lines', () => {
    const keys = storyboardGate(
      file('requires_capability: { path: a.b, contains: "x" }\n', { title: '"A title\n  over two lines"' }),
    );
    expect(keys).toMatchObject({
      requires_capability: { path: 'a.b', contains: 'x' },
      title: 'A title over two lines',
    });
  });

  it("no storyboard-level gate (none, or a phase's only): neither a gate nor the title is read", () => {
    for (const header of ['', 'x-phase-gates: |\n  requires_capability: { path: a, present: true }\n']) {
      const keys = storyboardGate(file(header));
      expect(keys).not.toHaveProperty('requires_capability');
      expect(keys).not.toHaveProperty('title');
    }
  });

  it('read on demand, not with the keys every listing of the corpus reads; read again once the file changes', () => {
    const path = file('requires_capability:\n  path: a\n  present: true\n');
    expect(storyboardKeys(path)).not.toHaveProperty('requires_capability');
    expect(storyboardGate(path)).toMatchObject({ requires_capability: { path: 'a', present: true } });
    expect(storyboardGate(path)).toBe(storyboardGate(path));
    writeFileSync(path, `id: edited\ntitle: T\nrequires_capability:\n  path: b\n  present: false\n${PHASES}\n# longer`);
    expect(storyboardGate(path)).toMatchObject({ requires_capability: { path: 'b', present: false } });
  });

  it('a gate at the end of the file, its last line too', () => {
    const path = join(dir, 'gate-last.yaml');
    writeFileSync(path, 'id: gate_last\ntitle: T\nphases: []\nrequires_capability:\n  path: a\n  present: true');
    expect(storyboardGate(path)).toMatchObject({ requires_capability: { path: 'a', present: true } });
  });

  it('a key the file does not write is not in the answer', () => {
    const path = join(dir, 'no-version.yaml');
    writeFileSync(path, `id: no_version\ntitle: T\nrequires_capability:\n  path: a\n  present: true\n${PHASES}`);
    expect(storyboardGate(path)).toMatchObject({ title: 'T', requires_capability: { path: 'a', present: true } });
    expect(storyboardGate(path)).not.toHaveProperty('version');
  });

  it('not read when written twice, when its block does not parse alone, or when only the head of the file is read', () => {
    expect(
      storyboardGate(
        file('requires_capability:\n  path: a\n  equals: 1\nrequires_capability:\n  path: b\n  equals: 2\n'),
      ),
    ).not.toHaveProperty('requires_capability');
    expect(storyboardGate(file('requires_capability:\n  <<: *elsewhere\n'))).not.toHaveProperty('requires_capability');
    // Over the anchor bound (100), though the parser would take it.
    const anchors = Array.from({ length: 101 }, (_, i) => `&a${i} ${i}`).join(', ');
    expect(
      storyboardGate(file(`requires_capability:\n  path: a\n  present: true\n  x-n: [${anchors}]\n`)),
    ).not.toHaveProperty('requires_capability');
    const big = join(dir, 'big.yaml');
    writeFileSync(
      big,
      `id: big\ntitle: T\nrequires_capability:\n  path: a\n  equals: true\n${PHASES}${'#'.repeat(DEFAULT_STORYBOARD_BOUNDS.maxBytes)}\n`,
    );
    expect(storyboardKeys(big)).toMatchObject({ id: 'big' });
    expect(storyboardGate(big)).toEqual({});
    expect(storyboardGate(join(dir, 'missing.yaml'))).toEqual({});
  });
});

describe('notApplicableUpFront', () => {
  const answer = {
    supported_protocols: ['media_buy', 'creative'],
    media_buy: { buying_modes: ['auction'] },
    creative: { has_creative_library: true },
  };

  it("lists each storyboard whose gate the answer does not satisfy, in the files' order, with the engine's detail", async () => {
    const predicates = [
      { path: 'media_buy.buying_modes', contains: 'wholesale' },
      { path: 'media_buy.buying_modes', contains: 'auction' },
      { path: 'signals.catalog', present: true },
      { path: 'creative.has_creative_library', equals: true },
      { path: 'supported_protocols', present: false },
    ];
    const files = predicates.map((p) =>
      file(
        `requires_capability:\n${Object.entries(p)
          .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
          .join('\n')}\n`,
      ),
    );
    const graded = await notApplicableUpFront([...files, file('')], answer, { schemasDir, secrets: [] });
    expect(graded.map((g) => g.storyboard.file)).toEqual([files[0], files[2], files[4]]);
    for (const g of graded) {
      const predicate = predicates[files.indexOf(g.storyboard.file)]!;
      expect(g.skip).toEqual({ reason: 'not_applicable', detail: capabilityUnmet(predicate, { data: answer }) });
    }
    expect(graded[0]).toEqual({
      storyboard: {
        id: expect.stringMatching(/^sb_/),
        title: 'A gated storyboard',
        version: '1.2.0',
        track: 'core',
        file: files[0],
      },
      skip: {
        reason: 'not_applicable',
        detail: 'requires_capability: media_buy.buying_modes must contain "wholesale"; the agent declares ["auction"]',
      },
    });
  });

  it("reads what a field the agent left out means from the capabilities schema's default", async () => {
    // get-adcp-capabilities-response.json: creative.supports_generation defaults to false.
    const wantsFalse = file('requires_capability:\n  path: creative.supports_generation\n  equals: false\n');
    const wantsTrue = file('requires_capability:\n  path: creative.supports_generation\n  equals: true\n');
    const graded = await notApplicableUpFront([wantsFalse, wantsTrue], answer, { schemasDir, secrets: [] });
    expect(graded.map((g) => [g.storyboard.file, g.skip.detail])).toEqual([
      [wantsTrue, 'requires_capability: creative.supports_generation must equal true; the agent declares false'],
    ]);
    // Without the schemas, no default: the agent declares no value, and false is not met either.
    expect(
      await notApplicableUpFront([wantsFalse, file('')], answer, { schemasDir: undefined, secrets: [] }),
    ).toHaveLength(1);
  });

  it('leaves to the run a gate that is not a predicate this format defines', async () => {
    const files = [
      'requires_capability:\n  path: a.b\n  equals: true\n  contains: x\n',
      'requires_capability:\n  path: a.b\n',
      'requires_capability:\n  path: a.b\n  matches: x\n',
      'requires_capability:\n  path: ""\n  equals: true\n',
      'requires_capability:\n  path: a.b\n  present: "yes"\n',
      'requires_capability: [a.b]\n',
      'requires_capability:\n',
      'requires_capability:\n  path: 5\n  equals: true\n',
      // A key the format does not define beside a matcher; one that only looks like an annotation.
      'requires_capability:\n  path: a.b\n  equals: true\n  matches: x\n',
      'requires_capability:\n  path: a.b\n  equals: true\n  max-depth: 2\n',
    ].map((header) => file(header));
    // A file that cannot be read, and one whose id is not a string, are left to the run too.
    const numericId = join(dir, 'numeric-id.yaml');
    writeFileSync(numericId, 'id: [5]\ntitle: T\nrequires_capability:\n  path: a.b\n  present: true\nphases: []\n');
    // A gate whose file's keys cannot be told (its id line does not parse).
    const brokenId = join(dir, 'broken-id.yaml');
    writeFileSync(
      brokenId,
      'id: "unclosed\ntitle: T\nrequires_capability:\n  path: a.b\n  present: true\nphases: []\n',
    );
    files.push(join(dir, 'missing.yaml'), numericId, brokenId);
    expect(await notApplicableUpFront(files, answer, { schemasDir, secrets: [] })).toEqual([]);
    // Annotations are allowed beside the predicate.
    const annotated = file('requires_capability:\n  path: a.b\n  present: true\n  x-note: why\n');
    expect(await notApplicableUpFront([annotated, file('')], answer, { schemasDir, secrets: [] })).toHaveLength(1);
  });

  it('names the storyboard by its id when its title is not a string, and leaves out a version that is not', async () => {
    const path = join(dir, 'odd-title.yaml');
    writeFileSync(
      path,
      `id: odd_title\nversion: 2\ntitle: 42\nrequires_capability:\n  path: a.b\n  present: true\n${PHASES}`,
    );
    const [graded] = await notApplicableUpFront([path, file('')], answer, { schemasDir, secrets: [] });
    expect(graded!.storyboard).toEqual({ id: 'odd_title', title: 'odd_title', file: path });
  });

  it('none when every storyboard would be: a run of no files is Vitest\'s "No test files found"', async () => {
    const off = file('requires_capability:\n  path: signals.catalog\n  present: true\n');
    expect(await notApplicableUpFront([off], answer, { schemasDir, secrets: [] })).toEqual([]);
    expect(await notApplicableUpFront([off, file('')], answer, { schemasDir, secrets: [] })).toHaveLength(1);
  });

  it("scrubs the run's secrets from the detail, which quotes what the agent declared", async () => {
    const secret = 'sk_live_do_not_print_me';
    const gatedFile = file('requires_capability:\n  path: media_buy.buying_modes\n  contains: wholesale\n');
    const [graded] = await notApplicableUpFront(
      [gatedFile, file('')],
      { media_buy: { buying_modes: [secret] } },
      { schemasDir, secrets: [secret] },
    );
    expect(graded!.skip.detail).toContain('the agent declares');
    expect(graded!.skip.detail).not.toContain(secret);
  });
});
