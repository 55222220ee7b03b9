/**
 * Selecting storyboards from a compliance tree by storyboard id, bundle
 * (`universal`, a protocol such as `media-buy`, or a specialism such as
 * `sales-guaranteed`, as listed in the tree's index.json) or track.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { parse } from 'yaml';

export interface CorpusSelection {
  /** Storyboard ids, e.g. `capability_discovery`. */
  storyboards?: string[];
  /** Bundles: `universal`, a protocol id or a specialism id from index.json. */
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
}

export class CorpusSelectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CorpusSelectionError';
  }
}

function yamlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...yamlFiles(full));
    else if (/\.ya?ml$/.test(name)) out.push(full);
  }
  return out;
}

/** Every storyboard of the tree (files with top-level `id` and `phases`), test kits and vectors excluded. */
export function listCorpus(root: string): CorpusEntry[] {
  const entries: CorpusEntry[] = [];
  for (const dir of ['universal', 'protocols', 'specialisms', 'domains']) {
    let files: string[];
    try {
      files = yamlFiles(join(root, dir));
    } catch {
      continue;
    }
    for (const file of files) {
      let doc: any;
      try {
        doc = parse(readFileSync(file, 'utf8'));
      } catch {
        // A broken corpus file is still selectable by path; the loader will report it.
        doc = undefined;
      }
      if (!doc || typeof doc !== 'object' || !('phases' in doc) || typeof doc.id !== 'string') continue;
      entries.push({ file, id: doc.id, track: doc.track, path: relative(root, file).split(sep).join('/') });
    }
  }
  return entries;
}

function bundleDirs(root: string): Map<string, string> {
  const dirs = new Map<string, string>([['universal', 'universal/']]);
  try {
    const index = JSON.parse(readFileSync(join(root, 'index.json'), 'utf8'));
    for (const group of ['protocols', 'specialisms', 'domains']) {
      for (const item of index[group] ?? []) if (item?.id && item?.path && !dirs.has(item.id)) dirs.set(item.id, item.path);
    }
  } catch {
    // No index.json: only `universal` is known as a bundle.
  }
  return dirs;
}

/** Absolute files of the selected storyboards. Unknown names are an error that lists what exists. */
export function selectCorpus(root: string, selection: CorpusSelection): string[] {
  const corpus = listCorpus(root);
  const chosen = new Set<string>();
  const unknown: string[] = [];
  for (const id of selection.storyboards ?? []) {
    const matches = corpus.filter((e) => e.id === id);
    if (matches.length === 0) unknown.push(`storyboard "${id}"`);
    matches.forEach((e) => chosen.add(e.file));
  }
  const bundles = bundleDirs(root);
  for (const bundle of selection.bundles ?? []) {
    const dir = bundles.get(bundle);
    if (!dir) {
      unknown.push(`bundle "${bundle}" (known: ${[...bundles.keys()].join(', ')})`);
      continue;
    }
    corpus.filter((e) => e.path.startsWith(dir)).forEach((e) => chosen.add(e.file));
  }
  for (const track of selection.tracks ?? []) {
    const matches = corpus.filter((e) => e.track === track);
    if (matches.length === 0) unknown.push(`track "${track}" (known: ${[...new Set(corpus.map((e) => e.track).filter(Boolean))].join(', ')})`);
    matches.forEach((e) => chosen.add(e.file));
  }
  if (unknown.length > 0) {
    throw new CorpusSelectionError(`the compliance corpus at ${root} has no ${unknown.join('; ')}. Check the ids in adcpStoryboards({ compliance }).`);
  }
  return [...chosen].sort();
}
