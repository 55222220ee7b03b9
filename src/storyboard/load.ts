/**
 * Storyboard loader: YAML text → `Storyboard`, or diagnostics that say where
 * and how to fix it. Steps, in order:
 *
 *   0. size and complexity bounds (bounds.ts, rule `storyboard_bound`): bytes, anchors and aliases on the text before
 *      it is parsed (a file's size before it is read), then phases, steps and the expanded size on the parsed data;
 *      a violation stops here;
 *   1. parse YAML (syntax errors stop here: rule `yaml_syntax`);
 *   2. validate against schema/storyboard.schema.json (rule `schema`);
 *   3. keys the format does not define (rule `unknown_key`: an error, or with
 *      `strictKeys: false` a warning for near misses of known keys);
 *   4. check the authoring rules of storyboard-schema.yaml (rules/…), and what can be checked before the agent is
 *      called: task names, `$context` / `{{prior_step…}}` references, path syntax, `sample_request` against the
 *      task's AdCP request schema (adcp-tasks.ts says which tasks and schemas exist);
 *   5. if there is no error, normalise into plain JSON with `loc`s.
 *
 * Steps 2–4 all run even when an earlier one found errors, so one run lists
 * everything to fix.
 */
import { adcpKnowledge } from './adcp-tasks.js';
import { checkDataBounds, checkTextBounds, type StoryboardBounds } from './bounds.js';
import { DiagnosticSink, StoryboardLoadError, sortDiagnostics } from './diagnostics.js';
import { formatVersionOf, forwardNote, keyPolicy } from './format.js';
import { normaliseStoryboard } from './normalise.js';
import { readStoryboardFile } from './read.js';
import { isPlainObject } from './paths.js';
import { buildRuleContext, checkAuthoringRules } from './rules/index.js';
import { validateAgainstSchema } from './schema.js';
import { MAX_ALIAS_COUNT, parseYaml } from './source-map.js';
import type { Diagnostic, Storyboard } from '../model/storyboard.js';
import { checkUnknownKeys } from './unknown-keys.js';

export interface LoadOptions {
  /**
   * Root of the compliance tree (the directory holding `test-kits/`, e.g.
   * `@adcp/sdk/compliance/cache/3.0.6`). Used to check `prerequisites.test_kit`.
   */
  corpusRoot?: string;
  /**
   * Keys the format does not define and `check` names it does not define are
   * errors (with the closest known name). `false`: a storyboard written for a
   * newer format version loads — near misses of known keys are warnings, other
   * unknown keys are kept, an unknown check is a warning (and fails at run time).
   * @default true
   */
  strictKeys?: boolean;
  /**
   * The AdCP version the storyboard is written for. Default: its compliance tree's `index.json` `adcp_version` when
   * the file lies under `corpusRoot`, else the format this package implements. A newer minor loads under the
   * runner-output contract's forward compatibility (format.ts): unknown keys and check kinds are warnings naming them.
   */
  formatVersion?: string;
  /** Size and complexity bounds (bounds.ts); each one not given keeps its default. */
  bounds?: StoryboardBounds;
  /**
   * AdCP JSON Schema directory (`…/schemas-data/<major.minor>`) whose tasks and request schemas a step's `task` and
   * `sample_request` are checked against. Default: with `corpusRoot`, the one of its AdCP version in the installed
   * `@adcp/sdk` (else the newest installed); without, none. `false`: neither is checked.
   */
  schemasDir?: string | false;
  /**
   * Where compiled request-schema validators are kept between runs (the registry's validator cache, as the run's
   * `cacheDir`): without it, the first storyboard of a process that checks a `sample_request` loads ajv and compiles
   * its task's schema (~80 ms CPU for one task, ~0.7 s for the whole corpus).
   */
  schemaCacheDir?: string;
}

export type LoadResult =
  | { ok: true; storyboard: Storyboard; /** Warnings only. */ diagnostics: Diagnostic[] }
  | { ok: false; /** At least one error; the first is the primary one. */ diagnostics: Diagnostic[] };

/** Load a storyboard from YAML text; `file` is used as given in `storyboard.file` and diagnostics. */
export function loadStoryboard(source: string, file: string, options: LoadOptions = {}): LoadResult {
  const sink = new DiagnosticSink(file);
  if (!checkTextBounds(source, sink, options.bounds)) return fail(sink.items);
  const parsed = parseYaml(source);
  for (const e of parsed.errors) sink.error('yaml_syntax', e.loc, e.message, yamlHint(e.code));
  for (const w of parsed.warnings) sink.warning('yaml_warning', w.loc, w.message);
  if (parsed.errors.length > 0) return fail(sink.items);

  const { data, map } = parsed;
  if (!checkDataBounds(data, map, sink, options.bounds, parsed.firstAlias)) return fail(sink.items);
  const formatVersion = options.formatVersion ?? formatVersionOf(file, options.corpusRoot);
  const keys = keyPolicy(options.strictKeys !== false, formatVersion);
  if (keys === 'forward' && isPlainObject(data) && data.phases === undefined) {
    // A newer format's non-executable entry (3.2's universal/governance.yaml indexes other storyboards): kept, and
    // graded as the contract's placeholder, no_phases.
    data.phases = [];
    sink.warning(
      'unknown_key',
      { line: 1, column: 1 },
      'this storyboard has no `phases:`',
      `${forwardNote(formatVersion)}: it is loaded with none, and graded no_phases`,
    );
  }
  validateAgainstSchema(data, map, sink);
  checkUnknownKeys(data, map, sink, keys, formatVersion);
  if (isPlainObject(data)) {
    const adcp = adcpKnowledge({
      corpusRoot: options.corpusRoot,
      ...(options.schemasDir !== undefined ? { schemasDir: options.schemasDir } : {}),
      ...(options.schemaCacheDir !== undefined ? { schemaCacheDir: options.schemaCacheDir } : {}),
    });
    checkAuthoringRules(buildRuleContext(data, map, sink, options.corpusRoot, keys, adcp, formatVersion));
  }

  const diagnostics = sortDiagnostics(sink.items);
  if (diagnostics.some((d) => d.severity === 'error')) return fail(diagnostics);
  const storyboard = normaliseStoryboard(data as Record<string, unknown>, map, file);
  if (formatVersion !== undefined) storyboard.formatVersion = formatVersion;
  return { ok: true, storyboard, diagnostics };
}

/**
 * Read and load a storyboard file. An unreadable file is a `file_unreadable` diagnostic; a file over the byte bound a
 * `storyboard_bound` one, without reading it.
 */
export function loadStoryboardFile(file: string, options: LoadOptions = {}): LoadResult {
  const read = readStoryboardFile(file, options.bounds);
  return read.ok ? loadStoryboard(read.text, file, options) : fail(read.diagnostics);
}

/** The storyboard of a successful load; throws `StoryboardLoadError` otherwise. */
export function unwrapLoadResult(result: LoadResult): Storyboard {
  if (!result.ok) throw new StoryboardLoadError(result.diagnostics);
  return result.storyboard;
}

function fail(diagnostics: Diagnostic[]): LoadResult {
  return { ok: false, diagnostics: sortDiagnostics(diagnostics) };
}

function yamlHint(code: string): string {
  switch (code) {
    case 'DUPLICATE_KEY':
      return 'a key appears twice in the same mapping; remove or rename one';
    case 'BAD_INDENT':
    case 'MISSING_CHAR':
    case 'UNEXPECTED_TOKEN':
      return 'check the indentation and the quoting on this line';
    case 'ALIAS_LIMIT':
      return `a storyboard may expand at most ${MAX_ALIAS_COUNT} aliases (*name); write the repeated data out, or anchor a smaller part`;
    case 'MULTIPLE_DOCS':
      return 'a storyboard file holds one YAML document; remove the extra `---`';
    default:
      return `YAML error ${code}`;
  }
}
