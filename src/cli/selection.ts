/**
 * What `npx vitest-adcp <url>` runs, and why each storyboard is in it — computed without Vitest, so `--list` answers
 * in the time it takes to ask the agent (and the run can say at its start what it is about to run).
 *
 * The files are the plugin's own choice: `selectCorpusInRunOrder` (storyboard/select.ts) with the same selection the bin
 * hands the plugin, then the `--storyboards *.yaml` files in the order given — the plugin's run order under
 * `--sequential`, else sorted by path, as Vitest lists them. The reasons are read back from the corpus: a storyboard
 * is in the run because it was named (`--storyboards <id>`, a bundle, `--tracks`), because the agent's capabilities
 * call for its bundle (universal, a protocol, a specialism), or because a storyboard in the run requires it
 * (`requires_scenarios`) — often for several of these at once.
 */
import {
  bundlePaths,
  listCorpus,
  selectCorpusInRunOrder,
  storyboardKeys,
  type CorpusEntry,
} from '../storyboard/select.js';

export interface SelectionRequest {
  /** The compliance tree, when anything is taken from it. */
  corpusRoot?: string;
  /** `--storyboards` ids, bundles and `--tracks`. */
  storyboards: string[];
  bundles: string[];
  tracks: string[];
  /** The ids the agent's capabilities select (undefined: the selection was named, not asked for). */
  capabilityIds?: string[];
  /** `--storyboards *.yaml` files: as given, and absolute. */
  files: { given: string; file: string }[];
  /** The plugin's run order (`--sequential`), else by path. */
  sequential: boolean;
  /** Where corpus warnings go (a required scenario the corpus lacks); the run's plugin prints its own. */
  warn?: (message: string) => void;
}

interface SelectedStoryboard {
  file: string;
  /** The storyboard's `id` (`-` when a named file has none that can be told without loading it: the run reports why). */
  id: string;
  /** Why it runs: one or more of `--storyboards <id>`, `bundle <b> (--storyboards)`, `track <t> (--tracks)`, `capabilities: …`, `required scenario of …`. */
  reasons: string[];
  /**
   * Set when the agent's capabilities answer grades it not applicable before the run (plugin/up-front.ts): the skip's
   * detail. The run leaves it out and reports it skipped.
   */
  notApplicable?: string;
}

export interface Selection {
  storyboards: SelectedStoryboard[];
  /** Things worth knowing about the selection (a named storyboard that stands for a bundle). */
  notes: string[];
}

const GROUP_KIND: Record<string, string> = { protocols: 'protocol', specialisms: 'specialism', domains: 'domain' };

/** The capability bundle a corpus storyboard belongs to, as the reference chooses them: `universal`, `protocol media-buy`, … */
function capabilityBundle(path: string): { kind: string; id: string } {
  const [group = '', id = ''] = path.split('/');
  if (group === 'universal') return { kind: 'universal', id: 'universal' };
  return { kind: GROUP_KIND[group] ?? group, id };
}

function bundleLabel(bundle: { kind: string; id: string }): string {
  return bundle.kind === 'universal' ? 'universal' : `${bundle.kind} ${bundle.id}`;
}

/**
 * The `id` of a storyboard file named on the command line; `-` when it cannot be told. Read as the corpus is read
 * (`storyboardKeys`): of a file over the byte bound only its head, so a 43 MB file is not read whole to print its id
 * (the run then fails that file on the bound).
 */
function fileId(file: string): string {
  const id = storyboardKeys(file)?.id;
  return typeof id === 'string' ? id : '-';
}

function sample(ids: string[], at = 5): string {
  return ids.length <= at ? ids.join(', ') : `${ids.slice(0, at).join(', ')} and ${ids.length - at} more`;
}

export function explainSelection(request: SelectionRequest): Selection {
  const root = request.corpusRoot;
  const { storyboards, notes }: Selection =
    root && asksTheCorpus(request) ? corpusSelection(root, request) : { storyboards: [], notes: [] };
  for (const { given, file } of request.files) {
    if (storyboards.some((s) => s.file === file)) continue;
    storyboards.push({ file, id: fileId(file), reasons: [`--storyboards ${given}`] });
  }
  if (!request.sequential) storyboards.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { storyboards, notes };
}

/** Whether anything is taken from the corpus: ids, bundles or tracks named, or the agent's capabilities asked. */
function asksTheCorpus(request: SelectionRequest): boolean {
  return Boolean(
    request.storyboards.length || request.bundles.length || request.tracks.length || request.capabilityIds,
  );
}

/** The corpus storyboards of the run, in the plugin's run order, each with why; and the notes on baselines named. */
function corpusSelection(root: string, request: SelectionRequest): Selection {
  const order = selectCorpusInRunOrder(
    root,
    {
      storyboards: [...request.storyboards, ...(request.capabilityIds ?? [])],
      bundles: request.bundles,
      tracks: request.tracks,
    },
    { warn: request.warn ?? (() => {}) },
  );
  const corpus = listCorpus(root);
  const byFile = new Map(corpus.map((entry) => [entry.file, entry]));
  const direct = directlySelected(order, byFile, request, bundlePaths(root));
  const storyboards = order.map((file) => {
    const entry = byFile.get(file)!;
    const requiredBy = [...direct.keys()]
      .filter((other) => other.requires?.includes(entry.id))
      .map((other) => other.id);
    const reasons = [
      ...(direct.get(entry) ?? []),
      ...(requiredBy.length ? [`required scenario of ${requiredBy.join(', ')}`] : []),
    ];
    return { file, id: entry.id, reasons };
  });
  return { storyboards, notes: baselineNotes(request, corpus) };
}

/** The storyboards of the run that are in it for themselves (named, in a bundle or track named, or by capabilities), each with why. */
function directlySelected(
  order: string[],
  byFile: Map<string, CorpusEntry>,
  request: SelectionRequest,
  prefixes: Map<string, string>,
): Map<CorpusEntry, string[]> {
  const capabilityIds = new Set(request.capabilityIds ?? []);
  const direct = new Map<CorpusEntry, string[]>();
  for (const file of order) {
    const entry = byFile.get(file)!;
    const reasons: string[] = [];
    if (request.storyboards.includes(entry.id)) reasons.push(`--storyboards ${entry.id}`);
    for (const bundle of request.bundles)
      if (entry.path.startsWith(prefixes.get(bundle) ?? '\0')) reasons.push(`bundle ${bundle} (--storyboards)`);
    for (const track of request.tracks) if (entry.track === track) reasons.push(`track ${track} (--tracks)`);
    if (capabilityIds.has(entry.id)) reasons.push(`capabilities: ${bundleLabel(capabilityBundle(entry.path))}`);
    if (reasons.length > 0) direct.set(entry, reasons);
  }
  return direct;
}

/**
 * A storyboard named by id that is a bundle's baseline (its index.yaml) runs alone with its required scenarios, while
 * capability selection runs the whole bundle: say so, and how to get that.
 */
function baselineNotes(request: SelectionRequest, corpus: CorpusEntry[]): string[] {
  const notes: string[] = [];
  for (const id of request.storyboards) {
    const entry = corpus.find((e) => e.id === id);
    if (!entry || !/^(?:protocols|specialisms|domains)\/[^/]+\/index\.ya?ml$/.test(entry.path)) continue;
    const bundle = capabilityBundle(entry.path);
    if (request.bundles.includes(bundle.id)) continue;
    const inBundle = corpus
      .filter((e) => e.path.startsWith(`${entry.path.split('/').slice(0, 2).join('/')}/`))
      .map((e) => e.id);
    const running = new Set([entry.id, ...(entry.requires ?? [])]);
    const left = inBundle.filter((other) => !running.has(other));
    if (left.length === 0) continue;
    notes.push(
      `--storyboards ${id} runs that storyboard and the ${entry.requires?.length ?? 0} scenarios it requires; capability selection, for an agent that declares ${bundleLabel(bundle)}, runs the whole bundle ${bundle.id} (${inBundle.length} storyboards, also ${sample(left)}): --storyboards ${bundle.id} runs that.`,
    );
  }
  return notes;
}

/**
 * One line for the start of a run and the end of `--list`: how many storyboards, counted by why they run — each by its
 * first reason, so the counts add up (a required scenario its bundle selected anyway counts for its bundle).
 */
export function selectionSummary(selection: Selection): string {
  const fromCapabilities = new Map<string, number>();
  const other = new Map<string, number>();
  const add = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  for (const { reasons } of selection.storyboards) {
    const reason = reasons[0] ?? '';
    if (reason.startsWith('capabilities: ')) add(fromCapabilities, reason.slice('capabilities: '.length));
    else if (reason.startsWith('required scenario of ')) add(other, 'required scenarios');
    else if (reason.startsWith('--storyboards ')) add(other, 'named in --storyboards');
    else add(other, reason.replace(/ \(--\w+\)$/, ''));
  }
  const counted = (counts: Map<string, number>) => [...counts].map(([label, count]) => `${count} ${label}`).join(', ');
  const parts = [
    ...(fromCapabilities.size ? [`from the agent's capabilities: ${counted(fromCapabilities)}`] : []),
    ...(other.size ? [counted(other)] : []),
  ];
  const n = selection.storyboards.length;
  const line = `${n} storyboard${n === 1 ? '' : 's'}${parts.length ? ` (${parts.join('; ')})` : ''}`;
  const notApplicable = selection.storyboards.filter((s) => s.notApplicable !== undefined).length;
  if (notApplicable === 0) return line;
  return `${line}, ${notApplicable} of them not applicable to the agent (requires_capability), reported skipped without running`;
}
