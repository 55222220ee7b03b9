/**
 * Size and complexity bounds on storyboard files (issue 20, case 5; src/storyboard/bounds.ts). Every big input is
 * generated in a temp dir, never committed. Each case failed before the bounds: the 50 MB file loaded for seconds at
 * gigabytes, 10^5 anchors went to the parser (minutes), 90 aliases of a 1 MB anchor loaded and were compiled into a
 * 90 MB module, 10^4 steps loaded and ran (for ever).
 *
 * "Quickly" is asserted as the work done, never as a wall-clock time (which load on the machine trips: a 3,000 ms bound
 * once took 3,238 ms): the bytes the process read, the values a walk visited, and that the stage after a bound never
 * ran — each input carries a fault that stage would report (a YAML syntax error, a duplicate step id), and the bound's
 * error must be the only one.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Lexer } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { compileOversizeStoryboard, compileStoryboard } from '../../src/compile/compile.js';
import { DEFAULT_STORYBOARD_BOUNDS, jsonSizeOver } from '../../src/storyboard/bounds.js';
import { parseYaml } from '../../src/storyboard/source-map.js';
import {
  findStoryboardFiles,
  formatDiagnostic,
  isStoryboardSource,
  loadStoryboard,
  loadStoryboardFile,
  type LoadResult,
} from '../../src/storyboard/index.js';

const repo = path.resolve(import.meta.dirname, '../..');
const corpusRoot = path.join(repo, 'node_modules/@adcp/sdk/compliance/cache/3.0.6');

const dir = mkdtempSync(path.join(tmpdir(), 'adcp-bounds-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MiB = 1024 * 1024;
const HEAD =
  'id: big\nversion: "1.0.0"\ntitle: Big\ncategory: x\nsummary: s\nnarrative: n\nagent:\n  interaction_model: media_buy_seller\ncaller:\n  role: buyer_agent\n';
const ONE_STEP = 'phases:\n  - id: p\n    title: P\n    steps:\n      - { id: s, title: S, task: get_products }\n';

/** `n` steps in one phase, one flow mapping a line (about 40 bytes a step). */
function manySteps(n: number): string {
  const steps = Array.from({ length: n }, (_, i) => `      - { id: s${i}, title: S, task: get_products }`);
  return `${HEAD}phases:\n  - id: p\n    title: P\n    steps:\n${steps.join('\n')}\n`;
}

function primary(result: LoadResult): string {
  expect(result.ok).toBe(false);
  const errors = result.diagnostics.filter((d) => d.severity === 'error');
  expect(errors).toHaveLength(1);
  return formatDiagnostic(errors[0]!);
}

/** Linux's count of the bytes this process has read (`rchar`: every read(2), from disk or the page cache). */
const PROC_IO = '/proc/self/io';
const hasProcIo = existsSync(PROC_IO);
function bytesRead(): number {
  return Number(/^rchar: (\d+)$/m.exec(readFileSync(PROC_IO, 'utf8'))![1]);
}

/** What `fn` returns, and how many bytes the process read while it ran. */
function reading<T>(fn: () => T): { value: T; read: number } {
  const before = bytesRead();
  const value = fn();
  return { value, read: bytesRead() - before };
}

/** A syntax error the parser reports, put at the end of a text: a bound checked before parsing leaves it unreported. */
const BROKEN_TAIL = 'x-broken: [a, b\n';

describe('the defaults', () => {
  it('hold the whole corpus with a 10× margin on every bound', () => {
    const files = readdirSync(corpusRoot, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.yaml') && !/^test-(kits|vectors)\//.test(f))
      .map((f) => path.join(corpusRoot, f))
      .filter((f) => isStoryboardSource(readFileSync(f, 'utf8'), f));
    expect(files).toHaveLength(84);
    const max = { bytes: 0, anchors: 0, aliases: 0, expanded: 0, phases: 0, steps: 0 };
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      max.bytes = Math.max(max.bytes, Buffer.byteLength(text));
      const tokens = [...new Lexer().lex(text)];
      max.anchors = Math.max(max.anchors, tokens.filter((t) => t.startsWith('&')).length);
      max.aliases = Math.max(max.aliases, tokens.filter((t) => t.startsWith('*')).length);
      const { data, errors } = parseYaml(text);
      expect(errors).toEqual([]);
      const phases = (data as { phases: { steps?: unknown[] }[] }).phases;
      max.phases = Math.max(max.phases, phases.length);
      max.steps = Math.max(
        max.steps,
        phases.reduce((n, p) => n + (p.steps?.length ?? 0), 0),
      );
      max.expanded = Math.max(max.expanded, JSON.stringify(data).length);
    }
    const b = DEFAULT_STORYBOARD_BOUNDS;
    expect(max.bytes * 10).toBeLessThanOrEqual(b.maxBytes);
    expect(max.anchors * 10).toBeLessThanOrEqual(b.maxAnchors);
    expect(max.aliases * 10).toBeLessThanOrEqual(b.maxAliases);
    expect(max.expanded * 10).toBeLessThanOrEqual(b.maxExpandedBytes);
    expect(max.phases * 10).toBeLessThanOrEqual(b.maxPhases);
    expect(max.steps * 10).toBeLessThanOrEqual(b.maxSteps);
    // What they are (reported in docs/security.md): 51 KB, no anchor or alias, 41 KB expanded, 9 phases, 31 steps.
    expect(max).toEqual({ bytes: 51072, anchors: 0, aliases: 0, expanded: 41039, phases: 9, steps: 31 });
  });
});

describe('bytes', () => {
  const big = path.join(dir, 'fifty.storyboard.yaml');
  // 50 MB: a storyboard with a huge x- annotation, and a syntax error at its end that only a parse would report.
  writeFileSync(
    big,
    HEAD +
      ONE_STEP +
      'x-filler:\n' +
      '  - "0123456789012345678901234567890123456789012345678901234567890123456789"\n'.repeat(680_000) +
      BROKEN_TAIL,
  );

  it('a 50 MB file is one located load error', () => {
    expect(primary(loadStoryboardFile(big))).toMatch(
      /^.*fifty\.storyboard\.yaml:1:1: \[storyboard_bound\] the storyboard file is 5\d{7} bytes, over the bound maxBytes = 524288 bytes \(raise it with the option storyboardBounds: \{ maxBytes: … \}/,
    );
  });

  it.runIf(hasProcIo)('… without reading it: under 64 KiB read while it loads', () => {
    const { value, read } = reading(() => loadStoryboardFile(big));
    expect(value.ok).toBe(false);
    expect(read).toBeLessThan(64 * 1024);
    // The count can fail: reading the file counts its 50 MB.
    expect(reading(() => readFileSync(big)).read).toBeGreaterThan(50_000_000);
  });

  it('as text (what Jest hands its transformer): the error before any parsing, and a small module without the text in its map', () => {
    const text = readFileSync(big, 'utf8');
    const value = compileStoryboard(text, big, { runtime: 'r' });
    // Only the bound: the syntax error at the end of the text, which any parse reports, is not.
    expect(value.diagnostics.map((d) => d.rule)).toEqual(['storyboard_bound']);
    expect(
      compileStoryboard(HEAD + ONE_STEP + BROKEN_TAIL, 'b.yaml', { runtime: 'r' }).diagnostics.map((d) => d.rule),
    ).toEqual(['yaml_syntax']);
    expect(value.code.length).toBeLessThan(10_000);
    expect(JSON.stringify(value.map).length).toBeLessThan(10_000);
    expect(value.code).toContain('loads without errors (storyboard_bound)');
  });

  it("the plugin's load hook compiles the failure unread, as a test module and as an imported storyboard", () => {
    const tests = compileOversizeStoryboard(big, 52_000_000, { runtime: 'r' });
    expect(tests.code).toContain('loads without errors (storyboard_bound)');
    const data = compileOversizeStoryboard(big, 52_000_000, { runtime: 'r', mode: 'data' });
    expect(data.code).toMatch(/^throw new Error\(.*\[storyboard_bound\] the storyboard file is 52000000 bytes/);
  });

  it('peaks under 300 MB in a process that loads and compiles it', () => {
    // A child with a 300 MB heap: the same calls, then its peak resident set size (VmHWM).
    const script = `
      import { readFileSync } from 'node:fs';
      import { loadStoryboardFile } from './src/storyboard/load.ts';
      import { compileStoryboard } from './src/compile/compile.ts';
      const file = ${JSON.stringify(big)};
      const a = loadStoryboardFile(file);
      const b = compileStoryboard(readFileSync(file, 'utf8'), file, { runtime: 'r' });
      const hwm = /^VmHWM:\\s+(\\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
      console.log(JSON.stringify({ rules: [a.diagnostics[0].rule, b.diagnostics[0].rule], peakKiB: hwm ? Number(hwm[1]) : process.resourceUsage().maxRSS }));
    `;
    const child = spawnSync(
      process.execPath,
      ['--max-old-space-size=300', '--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: repo, encoding: 'utf8', timeout: 30_000 },
    );
    expect(child.stderr).toBe('');
    const out = JSON.parse(child.stdout.trim().split('\n').pop()!);
    expect(out.rules).toEqual(['storyboard_bound', 'storyboard_bound']);
    expect(out.peakKiB).toBeLessThan(300 * 1024);
  }, 30_000);

  it('findStoryboardFiles reads only the head of a file over the bound', () => {
    const { value, read } = reading(() => findStoryboardFiles(dir));
    expect(value).toContain(big);
    // The head is the byte bound (512 KiB); on Linux, counted.
    if (hasProcIo) expect(read).toBeLessThan(DEFAULT_STORYBOARD_BOUNDS.maxBytes + 64 * 1024);
  });
});

describe('anchors and aliases, counted before parsing', () => {
  it('10^5 anchors: a located error at the first one over the bound, before the parser (with the byte bound raised to let them through)', () => {
    const anchors = Array.from({ length: 100_000 }, (_, i) => `&a${i} ${i}`).join(', ');
    // The parser took minutes over these: the syntax error after them, which it reports, says it never ran.
    const text = `${HEAD}${ONE_STEP}x-many: [${anchors}]\n${BROKEN_TAIL}`;
    const value = loadStoryboard(text, 'many.yaml', { bounds: { maxBytes: 10 * MiB } });
    const line = text.split('\n').length - 2;
    // Anchor 101 is the 101st item: `x-many: [` is 9 characters, then 100 items before it.
    const column = 10 + Array.from({ length: 100 }, (_, i) => `&a${i} ${i}, `.length).reduce((a, b) => a + b, 0);
    expect(primary(value)).toBe(
      `many.yaml:${line}:${column}: [storyboard_bound] the storyboard has more than 100 YAML anchors (&name): anchor 101 is here, over the bound maxAnchors = 100 (raise it with the option storyboardBounds: { maxAnchors: … } of adcpStoryboards() (or of the Jest transformer) if the file is meant to be this big)`,
    );
    // With the default byte bound the file is refused on its size first.
    expect(primary(loadStoryboard(text, 'many.yaml'))).toMatch(
      /\[storyboard_bound\] the storyboard file is \d+ bytes, over the bound maxBytes/,
    );
  });

  it('counts anchors and aliases, not & and * in quoted or block text', () => {
    const text = `${HEAD}${ONE_STEP}x-text: "${'a & b *c* '.repeat(200)}"\nx-block: |\n  ${'&d *e '.repeat(200)}\n`;
    expect(loadStoryboard(text, 'text.yaml').ok).toBe(true);
  });

  it('100 anchors pass, with more & in the text than the bound (counted by the lexer then); 101 do not', () => {
    const anchors = (n: number) => Array.from({ length: n }, (_, i) => `&a${i} ${i}`).join(', ');
    const text = (n: number) => `${HEAD}${ONE_STEP}x-text: "a & b"\nx-many: [${anchors(n)}]\n`;
    expect(loadStoryboard(text(100), 'hundred.yaml').ok).toBe(true);
    expect(primary(loadStoryboard(text(101), 'many.yaml'))).toMatch(/more than 100 YAML anchors \(&name\): anchor 101/);
  });

  it('101 aliases: located at the 101st', () => {
    const text = `${HEAD}${ONE_STEP}x-a: &a 1\nx-r: [${Array(101).fill('*a').join(', ')}]\n`;
    const line = text.split('\n').length - 1;
    expect(primary(loadStoryboard(text, 'aliases.yaml'))).toMatch(
      new RegExp(
        `^aliases\\.yaml:${line}:407: \\[storyboard_bound\\] the storyboard has more than 100 YAML aliases \\(\\*name\\): alias 101 is here, over the bound maxAliases = 100`,
      ),
    );
  });

  it('90 aliases of a 1 MB anchor (the byte bound raised to let it in): the expanded size, at the first alias, before anything is compiled', () => {
    const anchor = 'x'.repeat(MiB - 2000);
    const text = `x-big: &big "${anchor}"\n${HEAD}${ONE_STEP}x-r: [${Array(90).fill('*big').join(', ')}]\n`;
    const line = text.split('\n').length - 1;
    const value = compileStoryboard(text, 'amplified.yaml', { runtime: 'r', bounds: { maxBytes: 2 * MiB } });
    expect(value.diagnostics.map(formatDiagnostic)).toEqual([
      `amplified.yaml:${line}:7: [storyboard_bound] the storyboard's data with its aliases written out is more than 2097152 bytes, over the bound maxExpandedBytes = 2097152 bytes (raise it with the option storyboardBounds: { maxExpandedBytes: … } of adcpStoryboards() (or of the Jest transformer) if the file is meant to be this big)`,
    ]);
    // Not compiled: the module is the failing test, not 90 copies of the anchor.
    expect(value.code.length).toBeLessThan(3 * MiB);
  });

  it('90 aliases of a 500 KB anchor, under the default byte bound: the expanded size; one alias of it is fine', () => {
    const anchor = 'x'.repeat(500_000);
    const text = `x-big: &big "${anchor}"\n${HEAD}${ONE_STEP}x-r: [${Array(90).fill('*big').join(', ')}]\n`;
    expect(primary(loadStoryboard(text, 'amplified.yaml'))).toMatch(
      /^amplified\.yaml:17:7: \[storyboard_bound\] the storyboard's data with its aliases written out is more than 2097152 bytes/,
    );
    expect(loadStoryboard(`x-big: &big "${anchor}"\n${HEAD}${ONE_STEP}x-r: [*big]\n`, 'one.yaml').ok).toBe(true);
  });

  it('the existing alias-expansion cap still answers an alias bomb under the alias count', () => {
    const bomb = readFileSync(path.join(repo, 'fixtures/hostile/alias-bomb.storyboard.yaml'), 'utf8');
    expect(primary(loadStoryboard(bomb, 'bomb.yaml'))).toMatch(/\[yaml_syntax\] Excessive alias count/);
  });

  it('jsonSizeOver stops at the bound, however much the data would expand', () => {
    let bomb: unknown = ['x'];
    for (let i = 0; i < 60; i++) bomb = [bomb, bomb];
    expect(jsonSizeOver(bomb, 1_000_000)).toBe(true);
    // 2^60 leaves written out; the walk reads a bounded number of values (each object's two getters count a read).
    let reads = 0;
    let counted: unknown = 'x';
    for (let i = 0; i < 60; i++) {
      const inner = counted;
      counted = {
        get a() {
          reads++;
          return inner;
        },
        get b() {
          reads++;
          return inner;
        },
      };
    }
    expect(jsonSizeOver(counted, 10_000)).toBe(true);
    // Each object visited reads its two getters: stopping at the bound is 1,452 reads (deterministic); a walk that ran
    // on 10 % past the bound would read more than 1,500.
    expect(reads).toBeGreaterThan(1_000);
    expect(reads).toBeLessThanOrEqual(1_500);
    expect(jsonSizeOver({ a: ['bc', 1, null] }, JSON.stringify({ a: ['bc', 1, null] }).length)).toBe(false);
  });
});

describe('phases and steps', () => {
  it('10^4 steps: a located error at the first step over the bound, before the schema and the authoring rules', () => {
    // The last step repeats the first one's id: the authoring rules, had they run, would report it (as they do on 600).
    const text = manySteps(10_000).replace(/id: s9999,/, 'id: s0,');
    expect(Buffer.byteLength(text)).toBeLessThan(DEFAULT_STORYBOARD_BOUNDS.maxBytes);
    const repeated = manySteps(600).replace(/id: s599,/, 'id: s0,');
    expect(primary(loadStoryboard(repeated, 'steps.yaml', { bounds: { maxSteps: 600 } }))).toMatch(
      /\[duplicate_step_id\] step id "s0" is already used/,
    );
    const line = text.split('\n').findIndex((l) => l.includes('id: s500,')) + 1;
    expect(primary(loadStoryboard(text, 'steps.yaml'))).toBe(
      `steps.yaml:${line}:11: [storyboard_bound] the storyboard has 10000 steps, over the bound maxSteps = 500 (raise it with the option storyboardBounds: { maxSteps: … } of adcpStoryboards() (or of the Jest transformer) if the file is meant to be this big)`,
    );
    // Raised, it loads.
    expect(loadStoryboard(manySteps(600), 'steps.yaml', { bounds: { maxSteps: 600 } }).ok).toBe(true);
  });

  it('101 phases', () => {
    const phases = Array.from({ length: 101 }, (_, i) => `  - { id: p${i}, title: P, steps: [] }`).join('\n');
    expect(primary(loadStoryboard(`${HEAD}phases:\n${phases}\n`, 'phases.yaml'))).toMatch(
      /^phases\.yaml:\d+:7: \[storyboard_bound\] the storyboard has 101 phases, over the bound maxPhases = 100/,
    );
  });
});
