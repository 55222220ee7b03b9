/**
 * Names the AdCP 3.1 corpus reads from the run's context without any step capturing them: it was written for a runner
 * that keeps the ids a task answers with (`$context.media_buy_id` after create_media_buy, in
 * media_buy_seller/delivery_reporting; `$context.content_standards_id` after create_content_standards, in
 * content_standards; `$context.proposal_id` after get_products, in sales_proposal_mode). storyboard-schema.yaml names
 * three sources of the context accumulator — captures, the root `context:`, test-kit values — and none of these; the
 * storyboards' own text assumes them, so a run under the 3.1 contract's rules (model/contract-rules.ts
 * `conventionalCaptures`) keeps them — but only for a name the storyboard reads and never declares, so an author's
 * `context_outputs` always decides, and nothing lands in the context no step asks for. conformance.md, "Context the
 * 3.1 corpus assumes".
 */
import type { Storyboard } from '../model/storyboard.js';

type Extract = (data: Record<string, unknown>) => Record<string, unknown>;

const record = (value: unknown): Record<string, unknown> | undefined =>
  value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

const mediaBuyId: Extract = (data) => {
  const id = record(data.media_buy)?.media_buy_id ?? data.media_buy_id;
  return typeof id === 'string' && id !== '' ? { media_buy_id: id } : {};
};

/** What a passing step of each task keeps, by context name. */
const BY_TASK: Readonly<Record<string, Extract>> = {
  create_media_buy: mediaBuyId,
  update_media_buy: mediaBuyId,
  create_content_standards: (data) =>
    typeof data.standards_id === 'string' && data.standards_id !== ''
      ? { content_standards_id: data.standards_id }
      : {},
  get_products: (data) => {
    const proposal = Array.isArray(data.proposals) ? record(data.proposals[0]) : undefined;
    const id = proposal?.proposal_id;
    return typeof id === 'string' && id !== '' ? { proposal_id: id } : {};
  },
};

const CONTEXT_REFERENCE = /\$context\.([A-Za-z_][\w-]*)|\{\{\s*context\.([A-Za-z_][\w-]*)/g;

/** The names a storyboard reads from the context that neither its root `context:` nor any `context_outputs` declares. */
export function undeclaredContextReads(storyboard: Storyboard): Set<string> {
  const declared = new Set(Object.keys(storyboard.context ?? {}));
  const read = new Set<string>();
  for (const phase of storyboard.phases)
    for (const step of phase.steps) {
      for (const output of step.context_outputs ?? []) declared.add(output.name);
      const text = JSON.stringify([step.sample_request ?? null, step.validations, step.filter ?? null]);
      for (const match of text.matchAll(CONTEXT_REFERENCE)) read.add((match[1] ?? match[2])!);
    }
  return new Set([...read].filter((name) => !declared.has(name)));
}

/** The conventional values a passing step of `task` provides, among `wanted`. */
export function conventionalCaptures(task: string, data: unknown, wanted: ReadonlySet<string>): [string, unknown][] {
  const extract = Object.hasOwn(BY_TASK, task) ? BY_TASK[task] : undefined;
  const answer = record(data);
  if (!extract || !answer || wanted.size === 0) return [];
  return Object.entries(extract(answer)).filter(([name]) => wanted.has(name));
}
