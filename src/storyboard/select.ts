/**
 * Selecting storyboards from a compliance tree by storyboard id, bundle
 * (`universal`, a universal storyboard's file name such as `idempotency`, a
 * protocol such as `media-buy`, or a specialism such as `sales-guaranteed`, as
 * listed in the tree's index.json) or track — and, as the reference runner
 * does, the scenarios the selected storyboards compose through
 * `requires_scenarios`.
 *
 * Every name adds storyboards: the selection is the union of all of them,
 * across `storyboards`, `bundles` and `tracks` (never an intersection — a track
 * does not narrow a list of ids), each file once.
 *
 * The run order (`selectCorpusInRunOrder`, for `sequential: true`) is the
 * reference runner's: `comply()` runs its storyboards one at a time, in the
 * order it selected them, each one's required scenarios just before it. So
 * ids run in the order given (the capability-selected ids in the order
 * `resolveStoryboardsForCapabilities` lists them), then bundles, then tracks,
 * in the order given; a bundle or track expands to its storyboards in the
 * reference's corpus order (`referenceOrder`); a storyboard named twice keeps
 * its first place.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileStamp } from '../cache/disk-cache.js';
import { ConfigurationError } from '../model/errors.js';
import { checkTextBounds } from './bounds.js';
import { DiagnosticSink } from './diagnostics.js';
import { readStoryboardHead } from './read.js';
import { closestMatch } from './did-you-mean.js';
import { yaml } from './yaml-lib.js';

/** What to run from the corpus: the union of every storyboard named here, by id, bundle or track. */
export interface CorpusSelection {
  /** Storyboard ids, e.g. `capability_discovery`. */
  storyboards?: string[];
  /** Bundles: `universal`, a universal storyboard's file name, a protocol id or a specialism id from index.json. */
  bundles?: string[];
  /** Tracks, e.g. `core`, `security`. */
  tracks?: string[];
}

export interface CorpusEntry {
  file: string;
  id: string;
  track?: string;
  /** Path relative to the tree root, `/`-separated. */
  path: string;
  /** Ids of the scenarios this storyboard composes (`requires_scenarios`). */
  requires?: string[];
}

export interface SelectOptions {
  /** Where warnings go (a required scenario the corpus lacks). @default console.warn */
  warn?: (message: string) => void;
}

export class CorpusSelectionError extends ConfigurationError {}

/** Searched in this order; the first storyboard with an id wins (domains/ mirrors protocols/). */
const CORPUS_DIRS = ['universal', 'protocols', 'specialisms', 'domains'];

/** Every `.yaml`/`.yml` file under a directory, in sorted order. */
function yamlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...yamlFiles(full));
    else if (/\.ya?ml$/.test(name)) out.push(full);
  }
  return out;
}

function strings(value: unknown): string[] | undefined {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : undefined;
}

/** Every storyboard of the tree (files with top-level `id` and `phases`), test kits and vectors excluded. */
export function listCorpus(root: string): CorpusEntry[] {
  const entries: CorpusEntry[] = [];
  for (const dir of CORPUS_DIRS) {
    let files: string[];
    try {
      files = yamlFiles(join(root, dir));
    } catch {
      continue;
    }
    for (const file of files) {
      const doc = storyboardKeys(file);
      if (!doc || typeof doc !== 'object' || !('phases' in doc) || typeof doc.id !== 'string') continue;
      const requires = strings(doc.requires_scenarios);
      entries.push({
        file,
        id: doc.id,
        track: typeof doc.track === 'string' ? doc.track : undefined,
        path: relative(root, file).split(sep).join('/'),
        ...(requires?.length ? { requires } : {}),
      });
    }
  }
  return entries;
}

/** What a storyboard's `requires_capability` gate is decided and reported by before the run (plugin/up-front.ts). */
const GATE_KEYS = ['requires_capability', 'title', 'version'] as const;

/**
 * The top-level `id`, `track`, `phases` and `requires_scenarios` of a storyboard file, read after its size is checked
 * (read.ts: of a file over the byte bound only its head is read; its load then fails on the bound). What `listCorpus`
 * and the bin's `--list` know of a file. Undefined when the file cannot be read or the keys cannot be told.
 */
export function storyboardKeys(file: string): Record<string, unknown> | undefined {
  const stamp = fileStamp(file);
  if (stamp === 'missing') return undefined; // Loading it says why (file_unreadable).
  const known = keysRead.get(file);
  if (known?.stamp === stamp) return known.keys;
  let head: { text: string; whole: boolean };
  try {
    head = readStoryboardHead(file);
  } catch {
    return undefined;
  }
  const keys = topLevelKeys(head.text, head.whole);
  // The gate's text is kept as the file is read: parsed only if a run asks for it (storyboardGate).
  keysRead.set(file, { stamp, keys, ...(head.whole ? { gate: gateSource(head.text) } : {}) });
  return keys;
}

/**
 * `storyboardKeys`' answers in this process, by file, with the size and modification time they were read at: one run
 * lists its corpus several times (the capability selection, the plugin's selection, the bin's explanation, the runs'
 * known ids), ~60 ms each over a 3.1 corpus; a file changed since is read again. With the text of the file's
 * `requires_capability` gate (`gate`), and that gate once parsed (`gateKeys`).
 */
const keysRead = new Map<
  string,
  { stamp: string; keys: Record<string, unknown> | undefined; gate?: string; gateKeys?: Record<string, unknown> }
>();

/**
 * The top-level keys of `storyboardKeys`, without parsing the whole file: every run selects from the corpus, and
 * parsing its 84 files whole took 0.4 s of each run's start. The plain one-line forms (`id: x`, `track: "y"`,
 * `phases:`) are read from the text; a file that uses `requires_scenarios`, or writes any of them another way, is
 * parsed whole, so the answer is always the YAML parser's — unless the text is only the head of a file over the byte
 * bound (`whole: false`, cut anywhere) or over the anchor or alias bound (whose parse is what the bound prevents):
 * then the plain lines are all it says.
 */
function topLevelKeys(text: string, whole: boolean): Record<string, unknown> | undefined {
  const line = (key: string) => new RegExp(`^${key}:[ \\t]*(.*)$`, 'm').exec(text)?.[1];
  const id = line('id');
  const track = line('track');
  const plain = (value: string | undefined) =>
    value === undefined || /^(?:"[\w./-]+"|'[\w./-]+'|[\w./-]+)(?:[ \t]+#.*)?$/.test(value);
  // No `id:` line and not a flow-style document: not a storyboard (storyboard-schema.yaml, the output contract).
  if (id === undefined && !/^(?:[ \t]*(?:#.*)?\n)*[ \t]*[{[]/.test(text)) return {};
  const requires = blockList(text, 'requires_scenarios');
  const needsParse =
    requires === null ||
    id === undefined ||
    !plain(id) ||
    !plain(track) ||
    /^(?:"id"|'id'|"track"|'track'|"phases"|'phases'|"requires_scenarios"|'requires_scenarios')\s*:/m.test(text);
  if (needsParse && whole && checkTextBounds(text, new DiagnosticSink(''), undefined)) {
    try {
      return yaml().parse(text) as Record<string, unknown>;
    } catch {
      // A broken corpus file is still selectable by path; the loader will report it.
      return undefined;
    }
  }
  if (needsParse && (id === undefined || !plain(id))) return undefined;
  const unquote = (value: string | undefined) => value?.replace(/[ \t]+#.*$/, '').replace(/^["']|["']$/g, '');
  return {
    ...(id !== undefined ? { id: unquote(id) } : {}),
    ...(track !== undefined && plain(track) ? { track: unquote(track) } : {}),
    ...(/^phases:/m.test(text) ? { phases: true } : {}),
    ...(requires ? { requires_scenarios: requires } : {}),
  };
}

/**
 * A storyboard file's top-level `requires_capability`, `title` and `version`, when it declares such a gate: what a run
 * that asked the agent for its capabilities decides the storyboard by before it runs, and reports it by
 * (plugin/up-front.ts). The gate's text is cut out as `storyboardKeys` reads the file, and parsed here, on demand:
 * every listing of the corpus reads the keys, and few runs need the gates. Empty when the file declares none, cannot
 * be read, or is over the byte bound (only its head is read).
 */
export function storyboardGate(file: string): Record<string, unknown> {
  storyboardKeys(file);
  const entry = keysRead.get(file);
  if (entry?.gate === undefined) return {};
  return (entry.gateKeys ??= parseGate(entry.gate));
}

/**
 * The top-level blocks of the gate's keys (each its line and the indented, comment and blank lines under it), as one
 * text; undefined when the file declares no storyboard-level gate. 58 of the 151 files of 3.1.15 declare one.
 */
function gateSource(text: string): string | undefined {
  if (!/^requires_capability:/m.test(text)) return undefined;
  const lines = text.split('\n');
  const blocks: string[] = [];
  for (const key of GATE_KEYS) {
    // A key written twice is two blocks, and the parse refuses the duplicate.
    for (const start of lines.flatMap((line, i) => (line.startsWith(`${key}:`) ? [i] : []))) {
      const end = lines.findIndex((line, i) => i > start && !/^(?:[ \t]|#|$)/.test(line));
      blocks.push(lines.slice(start, end === -1 ? lines.length : end).join('\n'));
    }
  }
  return blocks.join('\n');
}

/**
 * The gate's blocks parsed together by the YAML parser, not the whole file. Nothing when they do not parse (a key
 * written twice, an alias of an anchor elsewhere) or are over the anchor or alias bound: the gate is then the run's to
 * decide, step by step.
 */
function parseGate(source: string): Record<string, unknown> {
  if (!checkTextBounds(source, new DiagnosticSink(''), undefined)) return {};
  let parsed: Record<string, unknown>;
  try {
    // A mapping: the blocks start with the gate's own `requires_capability:` line.
    parsed = yaml().parse(source) as Record<string, unknown>;
  } catch {
    return {};
  }
  return pick(parsed, GATE_KEYS);
}

function pick(record: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => Object.hasOwn(record, key)).map((key) => [key, record[key]]));
}

/**
 * A top-level key written as a block list of plain scalars (`key:` then
 * `  - value` lines): its values; undefined when the key is absent; null when
 * it is written any other way (the caller then parses the file whole).
 */
function blockList(text: string, key: string): string[] | undefined | null {
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith(`${key}:`));
  if (at === -1) return undefined;
  if (!/^[^:]+:[ \t]*(#.*)?$/.test(lines[at]!)) return null;
  const values: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (/^[ \t]*(#.*)?$/.test(l)) continue;
    if (!/^[ \t]/.test(l)) break;
    const item = /^[ \t]+-[ \t]+([\w./-]+)[ \t]*(#.*)?$/.exec(l);
    if (!item) return null;
    values.push(item[1]!);
  }
  return values;
}

/** Bundle id → the path prefix of its storyboards (a directory ending in `/`, or one universal file). */
export function bundlePaths(root: string): Map<string, string> {
  const paths = new Map<string, string>([['universal', 'universal/']]);
  try {
    const index = JSON.parse(readFileSync(join(root, 'index.json'), 'utf8'));
    // The reference runner's bundle ids for universal storyboards are their file names (`adcp storyboard run <url> idempotency`).
    for (const name of index.universal ?? [])
      if (typeof name === 'string' && !paths.has(name)) paths.set(name, `universal/${name}.yaml`);
    for (const group of ['protocols', 'specialisms', 'domains']) {
      for (const item of index[group] ?? [])
        if (item?.id && item?.path && !paths.has(item.id)) paths.set(item.id, item.path);
    }
  } catch {
    // No index.json: only `universal` is known as a bundle.
  }
  return paths;
}

/** The bundle ids of the tree (from its index.json; cheap — no storyboard is read). */
export function bundleIds(root: string): string[] {
  return [...bundlePaths(root).keys()];
}

/**
 * The ids of the storyboards under each of `paths` (relative, `/`-separated prefixes: a bundle's directory or a
 * universal storyboard's file), path by path in the order given and under each in the reference's corpus order
 * (`referenceOrder`), each id once: the order `resolveStoryboardsForCapabilities` lists a declaration's storyboards in,
 * which `sequential` runs keep.
 */
export function storyboardIdsUnder(root: string, paths: readonly string[]): string[] {
  const corpus = listCorpus(root);
  const order = referenceOrder(root);
  return [...new Set(paths.flatMap((path) => entriesUnder(corpus, path, order).map((entry) => entry.id)))];
}

/**
 * Whether `file` is below the compliance tree at `root`: an installed corpus file, never edited, whose compiled module
 * (plugin/storyboard-modules.ts) or parsed test kit (test-kit.ts) the cache directory may keep.
 */
export function isInCorpus(file: string, root: string): boolean {
  const rel = relative(resolve(root), file);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/** The entries of `corpus` under `prefix` (a bundle's directory or file), in `order` (the reference's). */
function entriesUnder(
  corpus: readonly CorpusEntry[],
  prefix: string,
  order: (a: CorpusEntry, b: CorpusEntry) => number,
): CorpusEntry[] {
  return corpus.filter((entry) => entry.path.startsWith(prefix)).sort(order);
}

/** ` (did you mean "x"?)`, or nothing. */
function suggestion(word: string, known: Iterable<string>, label: (match: string) => string = (m) => `"${m}"`): string {
  const match = closestMatch(word, known);
  return match ? ` (did you mean ${label(match)}?)` : '';
}

/**
 * Absolute files of the selected storyboards, plus the scenarios they require,
 * sorted by path. Unknown names are an error that says what was probably meant,
 * or what exists.
 */
export function selectCorpus(root: string, selection: CorpusSelection, options: SelectOptions = {}): string[] {
  return selectCorpusInRunOrder(root, selection, options).sort();
}

/**
 * The files of `selectCorpus`, in the order the reference runner runs them
 * (`npx adcp storyboard run`, its `comply()`): ids in the order given, then
 * each bundle and each track (in the order given) expanded in the reference's
 * corpus order, each file at its first place; a required scenario that is not
 * selected itself runs just before the first storyboard that requires it.
 */
export function selectCorpusInRunOrder(
  root: string,
  selection: CorpusSelection,
  options: SelectOptions = {},
): string[] {
  const corpus = listCorpus(root);
  const order = referenceOrder(root);
  const byId = new Map<string, CorpusEntry>();
  for (const entry of corpus) if (!byId.has(entry.id)) byId.set(entry.id, entry);
  const bundles = bundlePaths(root);
  const names = {
    storyboards: [...byId.keys()],
    bundles: [...bundles.keys()],
    tracks: [...new Set(corpus.map((e) => e.track).filter((t): t is string => Boolean(t)))],
  };
  const chosen = new Set<CorpusEntry>();
  const unknown: string[] = [];
  for (const id of selection.storyboards ?? []) {
    const entry = byId.get(id);
    if (entry) chosen.add(entry);
    else
      unknown.push(
        `storyboard "${id}"${suggestion(id, [...names.storyboards, ...names.bundles], (m) => (byId.has(m) ? `"${m}"` : `bundle "${m}"`))}`,
      );
  }
  for (const bundle of selection.bundles ?? []) {
    const prefix = bundles.get(bundle);
    if (prefix) entriesUnder(corpus, prefix, order).forEach((e) => chosen.add(e));
    else unknown.push(`bundle "${bundle}"${suggestion(bundle, names.bundles)} (known: ${names.bundles.join(', ')})`);
  }
  for (const track of selection.tracks ?? []) {
    const matches = corpus.filter((e) => e.track === track);
    if (matches.length === 0)
      unknown.push(`track "${track}"${suggestion(track, names.tracks)} (known: ${names.tracks.join(', ')})`);
    matches.sort(order).forEach((e) => chosen.add(e));
  }
  if (unknown.length > 0) {
    throw new CorpusSelectionError(
      `the compliance corpus at ${root} has no ${unknown.join('; ')}. \`npx adcp storyboard list\` lists the storyboards and bundles of the installed @adcp/sdk.`,
    );
  }
  return [
    ...withRequiredScenarios(chosen, byId, options.warn ?? ((message) => console.warn(`[vitest-adcp] ${message}`))),
  ].map((e) => e.file);
}

/**
 * The reference runner runs the scenarios a selected storyboard names in
 * `requires_scenarios` as storyboards of their own, looked up over the whole
 * corpus (a specialism's scenarios may live in its parent protocol's bundle),
 * one level deep — so do we, or a specialism's verdict would miss them. As its
 * `comply()` (expandScenarios) does, a scenario that is not selected itself
 * runs just before the first storyboard that requires it; a selected one keeps
 * its own place.
 */
function withRequiredScenarios(
  chosen: Set<CorpusEntry>,
  byId: Map<string, CorpusEntry>,
  warn: (message: string) => void,
): Set<CorpusEntry> {
  const ordered = new Set<CorpusEntry>();
  for (const entry of chosen) {
    for (const id of entry.requires ?? []) {
      const scenario = byId.get(id);
      if (!scenario)
        warn(`${entry.path} requires scenario "${id}", which this compliance corpus does not have; it is not run.`);
      else if (!chosen.has(scenario)) ordered.add(scenario);
    }
    ordered.add(entry);
  }
  return ordered;
}

/**
 * The order the reference lists the storyboards of a corpus in
 * (`listAllComplianceStoryboards`, and each bundle as `loadBundleStoryboards`
 * reads it): universal, protocols, specialisms (then domains/), each group's
 * bundles in index.json's order, and inside a bundle directory its entries
 * sorted — `index.yaml` first — depth first.
 */
export function referenceOrder(root: string): (a: CorpusEntry, b: CorpusEntry) => number {
  let index: Record<string, unknown> = {};
  try {
    index = JSON.parse(readFileSync(join(root, 'index.json'), 'utf8'));
  } catch {
    // No index.json: bundles in name order.
  }
  const listed = (group: string): string[] => {
    const items = index[group];
    if (!Array.isArray(items)) return [];
    return items
      .map((item) => (typeof item === 'string' ? item : typeof item?.id === 'string' ? item.id : ''))
      .filter(Boolean);
  };
  const bundleOrder = new Map(CORPUS_DIRS.map((dir) => [dir, listed(dir)]));
  const key = (entry: CorpusEntry): [number, number, string[]] => {
    const [dir = '', ...rest] = entry.path.split('/');
    const group = CORPUS_DIRS.indexOf(dir);
    const bundle = dir === 'universal' ? (rest[0] ?? '').replace(/\.ya?ml$/, '') : (rest[0] ?? '');
    const at = bundleOrder.get(dir)?.indexOf(bundle) ?? -1;
    return [group === -1 ? CORPUS_DIRS.length : group, at === -1 ? Number.MAX_SAFE_INTEGER : at, rest];
  };
  return (a, b) => {
    const [groupA, bundleA, pathA] = key(a);
    const [groupB, bundleB, pathB] = key(b);
    if (groupA !== groupB) return groupA - groupB;
    if (bundleA !== bundleB) return bundleA - bundleB;
    for (let i = 0; i < Math.min(pathA.length, pathB.length); i++) {
      const x = pathA[i]!;
      const y = pathB[i]!;
      if (x === y) continue;
      if (x === 'index.yaml') return -1;
      if (y === 'index.yaml') return 1;
      return x < y ? -1 : 1;
    }
    return pathA.length - pathB.length;
  };
}
