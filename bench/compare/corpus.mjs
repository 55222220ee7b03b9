/**
 * The installed compliance corpus, read directly (YAML): storyboard id → file,
 * and each storyboard's phases and steps (ids + titles), which the compare
 * bench needs to turn the reference runner's step titles back into step ids.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { parse } from 'yaml';

function yamlFiles(dir) {
  const out = [];
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...yamlFiles(full));
    else if (/\.ya?ml$/.test(name)) out.push(full);
  }
  return out;
}

/**
 * @param {string} root compliance tree root (…/compliance/cache/<version>)
 * @param {{ seeds3_1?: boolean }} [o] seeds3_1: the reference seeds 3.1's fixture kinds too (13.x), see seedingSteps
 * @returns {{ files: (id: string) => string[], primary: (id: string) => string|undefined, idOf: (file: string) => string|undefined, steps: (id: string) => { phases: { id: string, steps: { id: string, title: string }[] }[], seeding: string[] } | undefined }}
 */
export function openCorpus(root, { seeds3_1 = false } = {}) {
  const byId = new Map();
  const byFile = new Map();
  const parsed = new Map();
  for (const dir of ['universal', 'protocols', 'specialisms', 'domains']) {
    for (const file of yamlFiles(join(root, dir))) {
      let doc;
      try {
        doc = parse(readFileSync(file, 'utf8'));
      } catch {
        continue;
      }
      if (!doc || typeof doc !== 'object' || !('phases' in doc) || typeof doc.id !== 'string') continue;
      byFile.set(file, doc.id);
      const list = byId.get(doc.id) ?? [];
      list.push(file);
      byId.set(doc.id, list);
      if (!parsed.has(doc.id)) parsed.set(doc.id, doc);
    }
  }
  // `domains/` mirrors `protocols/`: the protocols/ copy (what the reference loads) first.
  const rank = (file) => (relative(root, file).split(sep)[0] === 'domains' ? 1 : 0);
  for (const list of byId.values()) list.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  return {
    root,
    files: (id) => byId.get(id) ?? [],
    primary: (id) => byId.get(id)?.[0],
    /** The storyboard id of a file of this tree (an absolute path under `root`). */
    idOf: (file) => byFile.get(file),
    steps(id) {
      const doc = parsed.get(id);
      if (!doc) return undefined;
      const phases = (Array.isArray(doc.phases) ? doc.phases : []).map((p) => ({
        id: String(p?.id ?? ''),
        steps: (Array.isArray(p?.steps) ? p.steps : []).map((s) => ({
          id: String(s?.id ?? ''),
          title: String(s?.title ?? ''),
        })),
      }));
      return { phases, seeding: seedingSteps(doc, seeds3_1) };
    },
  };
}

/** The phase id both runners give the controller-seeding steps they inject before a storyboard's phases. */
export const SEEDING_PHASE = '__controller_seeding__';

/**
 * Step ids of the controller-seeding steps a storyboard implies
 * (`prerequisites.controller_seeding: true` + `fixtures:`), in the naming the
 * reference reports: `seed_<kind>.<id>` (pricing options: `.<product>.<option>`).
 * Accounts, buyer agents and creative formats are seeded by 13.x only (3.1
 * fixtures; 6.11 leaves them, e.g. 3.0.6's pagination-integrity-creative-formats
 * seeds its formats in steps of its own): `seeds3_1`.
 */
function seedingSteps(doc, seeds3_1) {
  if (doc?.prerequisites?.controller_seeding !== true || !doc.fixtures) return [];
  const f = doc.fixtures;
  const ids = [];
  const newer = (list) => (seeds3_1 ? (list ?? []) : []);
  for (const a of newer(f.accounts)) ids.push(`seed_account.${a?.account_id}`);
  for (const b of newer(f.buyer_agents)) ids.push(`seed_buyer_agent.${b?.agent_url}`);
  for (const p of f.products ?? []) ids.push(`seed_product.${p?.product_id}`);
  for (const p of f.pricing_options ?? []) ids.push(`seed_pricing_option.${p?.product_id}.${p?.pricing_option_id}`);
  for (const c of newer(f.creative_formats)) ids.push(`seed_creative_format.${c?.format_id}`);
  for (const c of f.creatives ?? []) ids.push(`seed_creative.${c?.creative_id}`);
  for (const p of f.plans ?? []) ids.push(`seed_plan.${p?.plan_id}`);
  for (const m of f.media_buys ?? []) ids.push(`seed_media_buy.${m?.media_buy_id}`);
  return ids;
}

/** A seeding step's id from the title the reference prints for it (its --json output has titles only). */
export function seedingStepId(title) {
  let m;
  if ((m = /^Seed pricing option (\S+) on (\S+)$/.exec(title))) return `seed_pricing_option.${m[2]}.${m[1]}`;
  if ((m = /^Seed media buy (\S+)$/.exec(title))) return `seed_media_buy.${m[1]}`;
  if ((m = /^Seed creative format (\S+)$/.exec(title))) return `seed_creative_format.${m[1]}`;
  if ((m = /^Seed buyer agent (\S+)$/.exec(title))) return `seed_buyer_agent.${m[1]}`;
  if ((m = /^Seed account (\S+)$/.exec(title))) return `seed_account.${m[1]}`;
  if ((m = /^Seed (product|creative|plan) (\S+)$/.exec(title))) return `seed_${m[1]}.${m[2]}`;
  return undefined;
}
