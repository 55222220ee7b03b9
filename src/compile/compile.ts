/**
 * Storyboard YAML → a test module: `describe(storyboard) › describe(phase) ›
 * it(step)`, with a source map so that each `describe`/`it` call — and so each
 * test's reported location, IDE gutter and failure frame — sits on its own node
 * in the YAML. Pure: no I/O, no network.
 *
 * How the map is made: the YAML text is cut into slices at the start of the
 * storyboard, of every phase and of every step; each slice is replaced
 * (MagicString.update) by the code for that node. magic-string maps every
 * line of a replacement to the start of the slice it replaced, so the `it(`
 * of a step maps to the step's first key.
 *
 * The phases and steps are the roles' plan (engine/role.ts `planPhases`, the `roles` of the options — the built-in
 * ones by default), the one the engine runs, so every step a role plans in has its test: a phase a role injects sits
 * at the storyboard's line, a step it synthesizes at its `loc`.
 */
import MagicString, { type SourceMap } from 'magic-string';
import { LOAD_FAILURE_TITLE, testTitle } from '../model/test-titles.js';
import { planPhases, type RunnerRole } from '../engine/role.js';
import { VECTORS_NOT_READ, type SigningVectorSource } from '../plan/signing-vectors.js';
import { BUILTIN_ROLES } from '../roles/index.js';
import { reportBytes, resolveBounds, type StoryboardBounds } from '../storyboard/bounds.js';
import { DiagnosticSink, formatDiagnostic } from '../storyboard/diagnostics.js';
import { loadStoryboard, type LoadResult } from '../storyboard/load.js';
import type { Diagnostic, SourceLocation, Storyboard } from '../model/storyboard.js';
import { storyboardDigest } from '../cache/stored-storyboards.js';

export interface CompileOptions {
  /** Module specifier of the runtime the generated code imports. */
  runtime: string;
  /**
   * `tests` (default): the test module. `data`: a module that only exports the
   * validated storyboard — what `import sb from './x.storyboard.yaml'` in a
   * hand-written test gets; it throws the load error at import.
   */
  mode?: 'tests' | 'data';
  /** Root of the compliance tree, for resolving `prerequisites.test_kit`. */
  corpusRoot?: string;
  /** LoadOptions.strictKeys: unknown keys and check names are load errors. @default true */
  strictKeys?: boolean;
  /**
   * The test framework of the generated module. `jest`: CommonJS (`require` of `@jest/globals` and the runtime — Jest
   * transforms test files to CommonJS unless it runs in its ESM mode), each `it` callback takes no parameter (Jest
   * reads one as `done`), the step timeout is `it`'s third argument (Jest has no per-test meta). @default 'vitest'
   */
  framework?: 'vitest' | 'jest';
  /** LoadOptions.bounds: size and complexity bounds on the storyboard file. */
  bounds?: StoryboardBounds;
  /** LoadOptions.schemasDir: the AdCP schemas task names and sample_request are checked against (default: corpusRoot's). */
  schemasDir?: string | false;
  /** LoadOptions.schemaCacheDir: where compiled request-schema validators are kept between runs. */
  schemaCacheDir?: string;
  /**
   * The request-signing conformance vectors the `signed_requests` storyboard's vector phases are planned from, read by
   * the caller (roles/request-signing/vectors.ts `signingVectorsFor`): the compiler reads no file. Absent: those phases
   * get their one failing `vectors_unavailable` step.
   */
  signingVectors?: SigningVectorSource;
  /**
   * The roles whose planned steps get tests (engine/role.ts `planPhases`): the ones the runs of this module are opened
   * with. @default BUILTIN_ROLES
   */
  roles?: readonly RunnerRole[];
  /**
   * Vitest's test module: `inline` (default) embeds the storyboard (base64 of its JSON); `stored` names it by digest
   * (`storyboardStored`), its JSON in the result's `stored`, for the caller to keep where the worker reads it
   * (cache/stored-storyboards.ts says why). Jest's module always embeds it.
   */
  storyboardData?: 'inline' | 'stored';
}

export interface CompileResult {
  code: string;
  map: SourceMap;
  /** Loader errors (then the module registers one failing test) and warnings. */
  diagnostics: Diagnostic[];
  storyboard?: Storyboard;
  /** `storyboardData: 'stored'`: the storyboard's JSON the module names, and its digest. */
  stored?: { digest: string; json: string };
}

export { testTitle };

const q = (value: unknown) => JSON.stringify(value);

/** The code frame of a file over the byte bound, which is not shown. */
const OVERSIZE_FRAME = '(the file is not shown: it is over the storyboardBounds.maxBytes bound)';

function lineOffsets(source: string): number[] {
  const offsets = [0];
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) offsets.push(i + 1);
  return offsets;
}

export function compileStoryboard(text: string, file: string, options: CompileOptions): CompileResult {
  const loaded = loadStoryboard(text, file, {
    corpusRoot: options.corpusRoot,
    ...(options.strictKeys === false ? { strictKeys: false } : {}),
    ...(options.bounds ? { bounds: options.bounds } : {}),
    ...(options.schemasDir !== undefined ? { schemasDir: options.schemasDir } : {}),
    ...(options.schemaCacheDir !== undefined ? { schemaCacheDir: options.schemaCacheDir } : {}),
  });
  // A text over the byte bound is neither mapped nor embedded in the source map: its one failing test sits at 1:1.
  const oversize =
    !loaded.ok &&
    loaded.diagnostics[0]?.rule === 'storyboard_bound' &&
    Buffer.byteLength(text, 'utf8') > resolveBounds(options.bounds).maxBytes;
  return compileLoaded(oversize ? '' : text, file, options, loaded, oversize);
}

/**
 * A storyboard file over the byte bound (`fileBytesOverBound`), compiled without reading it — the plugin's load hook
 * calls this before Vite reads the file: the module of its one load failure (or, `mode: 'data'`, the throwing import).
 */
export function compileOversizeStoryboard(file: string, bytes: number, options: CompileOptions): CompileResult {
  const sink = new DiagnosticSink(file);
  reportBytes(sink, bytes, options.bounds);
  return compileLoaded('', file, options, { ok: false, diagnostics: sink.items }, true);
}

function compileLoaded(
  text: string,
  file: string,
  options: CompileOptions,
  loaded: LoadResult,
  oversize = false,
): CompileResult {
  // No text (an empty file, one not read): the module is mapped onto a one-space stand-in, so its tests still sit at
  // 1:1 — a map over nothing maps nothing. The stand-in is the map's content: a map without one makes Vite read the
  // file to fill it in.
  const source = text === '' ? ' ' : text;
  const lines = lineOffsets(source);
  const offsetOf = (loc: SourceLocation) =>
    Math.min(source.length, (lines[loc.line - 1] ?? source.length) + loc.column - 1);
  const s = new MagicString(source);
  if (options.mode === 'data') return compileData(s, source, file, loaded);

  const jest = options.framework === 'jest';
  const storing = !jest && options.storyboardData === 'stored';
  const dataReader = storing ? 'storyboardStored' : 'storyboardData';
  const header = jest
    ? [
        `const { describe, it, afterAll } = require("@jest/globals");`,
        `const { storyboardSuite, loadFailureSuite } = require(${q(options.runtime)});`,
      ]
    : // One import, of the runtime's absolute path, which re-exports Vitest's own describe, it and afterAll: a bare
      // "vitest" here was resolved up the directories of each storyboard file (a corpus lies deep in node_modules),
      // 90 times in a first run — with the runtime's own resolve, 0.2 s of the main process (plugin.ts resolveId).
      [
        `import { describe, it, afterAll, storyboardSuite, loadFailureSuite, ${dataReader} } from ${q(options.runtime)};`,
      ];

  if (!loaded.ok) {
    const primary = loaded.diagnostics[0]!;
    const at = offsetOf(primary);
    const prefix = [...header, `const failure = loadFailureSuite(${q(loaded.diagnostics)});`, ''];
    // A file over the byte bound: its failure carries no stack frame into the file and a code frame of its own, or the
    // test runner would read the whole file again to show one (Vitest reads a failure's file for its source map and
    // its code frame).
    const fail = oversize
      ? `() => { try { failure.fail(); } catch (error) { throw Object.assign(error, { stack: String(error.message), frame: ${q(OVERSIZE_FRAME)} }); } }`
      : '() => failure.fail()';
    const body = [
      `describe(${q(fileName(file))}, () => {`,
      `it(${q(`${LOAD_FAILURE_TITLE} (${primary.rule})`)}, ${fail});`,
      `});`,
      '',
    ];
    replace(s, source, [
      { at: 0, code: prefix.join('\n') },
      { at, code: body.join('\n') },
    ]);
    return { code: s.toString(), map: map(s, file), diagnostics: loaded.diagnostics };
  }

  const storyboard = loaded.storyboard;
  const loadWarnings = loaded.diagnostics.filter((d) => d.severity === 'warning').map(formatDiagnostic);
  const json = JSON.stringify(storyboard);
  const stored = storing ? { digest: storyboardDigest(json), json } : undefined;
  const slices: { at: number; code: string }[] = [];
  slices.push({
    at: 0,
    code: [
      ...header,
      `const storyboard = ${storyboardExpression(json, jest, stored?.digest)};`,
      // Load warnings ride with the run onto its first step's record (the contract report, JUnit), not only the terminal.
      loadWarnings.length > 0
        ? `const suite = storyboardSuite(storyboard, ${q(loadWarnings)});`
        : `const suite = storyboardSuite(storyboard);`,
      '',
    ].join('\n'),
  });
  // Every step test and the close get a Vitest timeout above the engine's own bound (suite.timeout()), so Vitest never
  // cuts a step the engine is still bounding and the report always agrees with the terminal.
  const open = [
    `describe(${q(testTitle(storyboard.title, storyboard.id))}, () => {`,
    `afterAll(() => suite.close(), suite.timeout());`,
  ];
  if (storyboard.phases.length === 0) {
    open.push(
      `it(${q(`no phases (${storyboard.id})`)}, ${jest ? '() => suite.noPhases()' : '(ctx) => suite.noPhases(ctx)'});`,
    );
  }
  // The phases as the roles plan them, from what the caller gave: a role's plan reads no file here.
  const planned = planPhases(options.roles ?? BUILTIN_ROLES, storyboard, {
    corpusRoot: options.corpusRoot,
    signingVectors: options.signingVectors ?? VECTORS_NOT_READ,
  });
  const own = new Set(storyboard.phases.map((phase) => phase.id));
  // A phase a role injects (the controller seeding phase) has no YAML node: it sits at the storyboard's line.
  for (const phase of planned.filter((phase) => !own.has(phase.id))) {
    open.push(`describe(${q(testTitle(phase.title, phase.id))}, () => {`);
    for (const step of phase.steps) open.push(stepTest(step, phase.id, jest));
    open.push('});');
  }
  slices.push({ at: offsetOf(storyboard.loc), code: open.join('\n') + '\n' });

  // The YAML's phases at their lines, with the steps roles synthesize (the signed_requests vectors) at their `loc`.
  planned
    .filter((phase) => own.has(phase.id))
    .forEach((phase, p) => {
      const code = [p > 0 ? '});' : '', `describe(${q(testTitle(phase.title, phase.id))}, () => {`];
      if (phase.steps.length === 0) code.push(`it.todo(${q(`no steps (${phase.id})`)});`);
      slices.push({ at: offsetOf(phase.loc), code: code.filter(Boolean).join('\n') + '\n' });
      for (const step of phase.steps) {
        slices.push({ at: offsetOf(step.loc), code: `${stepTest(step, phase.id, jest)}\n` });
      }
    });
  slices.push({ at: source.length, code: (storyboard.phases.length > 0 ? '});\n' : '') + '});\n' });
  replace(s, source, slices);
  return {
    code: s.toString(),
    map: map(s, file),
    diagnostics: loaded.diagnostics,
    storyboard,
    ...(stored ? { stored } : {}),
  };
}

/**
 * How the module gets its storyboard. Vitest: named by digest (`stored`), or base64 of the JSON, not a JSON literal:
 * Vite's SSR transform maps every word boundary of a module, and JSON text is mostly boundaries: 9× the source-map
 * segments, and ~0.4 s of the main process over a 63-file run making and combining them. Jest transforms nothing after
 * us: the JSON.
 */
function storyboardExpression(json: string, jest: boolean, storedDigest: string | undefined): string {
  if (jest) return `JSON.parse(${q(json)})`;
  if (storedDigest !== undefined) return `storyboardStored(${q(storedDigest)})`;
  return `storyboardData(${q(Buffer.from(json).toString('base64'))})`;
}

/**
 * A step's `it`. Its meta names the step at collection time (`suite.planned`), so a test that never runs — filtered by
 * `-t`, a cancelled run — still tells the contract reporter which step it was ("not run", never silently dropped).
 */
function stepTest(step: { title?: string; id: string }, phaseId: string, jest = false): string {
  if (jest)
    return `it(${q(testTitle(step.title, step.id))}, () => suite.step(${q(phaseId)}, ${q(step.id)}), suite.timeout());`;
  return `it(${q(testTitle(step.title, step.id))}, { meta: suite.planned(${q(phaseId)}, ${q(step.id)}), timeout: suite.timeout() }, (ctx) => suite.step(ctx, ${q(phaseId)}, ${q(step.id)}));`;
}

function compileData(
  s: MagicString,
  source: string,
  file: string,
  loaded: ReturnType<typeof loadStoryboard>,
): CompileResult {
  const render = (d: Diagnostic) =>
    `${d.file}:${d.line}:${d.column}: [${d.rule}] ${d.message}${d.hint ? ` (fix: ${d.hint})` : ''}`;
  const code = loaded.ok
    ? `export default JSON.parse(${q(JSON.stringify(loaded.storyboard))});\n`
    : `throw new Error(${q(
        `storyboard ${file} does not load:\n${loaded.diagnostics
          .filter((d) => d.severity === 'error')
          .map(render)
          .join('\n')}`,
      )});\nexport default undefined;\n`;
  replace(s, source, [{ at: 0, code }]);
  return {
    code: s.toString(),
    map: map(s, file),
    diagnostics: loaded.diagnostics,
    ...(loaded.ok ? { storyboard: loaded.storyboard } : {}),
  };
}

function fileName(file: string): string {
  return file.split(/[\\/]/).pop() ?? file;
}

/**
 * Replaces the text from each slice start to the next with that slice's code.
 * Slices that start at the same offset are merged; the last one runs to EOF.
 */
function replace(s: MagicString, source: string, slices: { at: number; code: string }[]): void {
  const sorted = [...slices].sort((a, b) => a.at - b.at);
  const merged: { at: number; code: string }[] = [];
  for (const slice of sorted) {
    const last = merged.at(-1);
    if (last && last.at === slice.at) last.code += slice.code;
    else merged.push({ ...slice });
  }
  // An empty source, or code that belongs at EOF, is appended.
  merged.forEach((slice, i) => {
    const end = i + 1 < merged.length ? merged[i + 1]!.at : source.length;
    if (slice.at < end) s.update(slice.at, end, slice.code);
    else s.append(slice.code);
  });
}

function map(s: MagicString, file: string): SourceMap {
  return s.generateMap({ hires: 'boundary', includeContent: true, source: file, file: file + '.js' });
}
