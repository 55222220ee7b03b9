/**
 * References from one step to another must name a step that exists — and,
 * for `prior_step.<id>`, one that runs earlier — otherwise the reference can
 * never resolve and the step fails at run time with `unresolved_substitution`
 * (storyboard-schema.yaml, "Context accumulator and substitution",
 * "Webhook-assertion steps", Step → contributes_if).
 *
 *   contributes_if: "prior_step.<id>.passed"   (the only grammar)
 *   triggered_by: <id>                           (an earlier step)
 *   "{{prior_step.<id>.<field>}}"                 (an earlier step)
 *   "{{runner.webhook_url:<id>}}"                 (any step of the storyboard — or a receiver name of its own, as
 *                                                 the 3.1 corpus's account-level subscriber URLs are: a name that
 *                                                 is no step and no near miss of one is accepted)
 *
 * Context references must name a value the run can have by then, or the step fails `unresolved_substitution` after
 * the agent has been called (rule `unknown_context_reference`, located at the placeholder):
 *
 *   "$context.<name>…", "{{context.<name>…}}"    (in sample_request, validations' value / allowed_values, filter, …)
 *   context_inputs[].key                          (silently a no-op at run time when missing)
 *
 * A name is declared when the storyboard's root `context:` sets it, an earlier step's `context_outputs` captures it, or
 * any step's `context_outputs` mints it (`generate:`, at run start)
 * (storyboard-schema.yaml, "Context accumulator and substitution": the run's context holds exactly those — the
 * engine scopes no test-kit value into it). Earlier in document order is enough: the capturing step may sit in an
 * optional or branch-set phase, or be skipped at run time; that is a run-time verdict, not a typo. The field of
 * `{{prior_step.<id>.<field>}}` must be a path of the runner's dialect (rule `path_syntax`).
 */
import { closestMatch } from '../did-you-mean.js';
import { isPlainObject } from '../paths.js';
import type { DataPath } from '../source-map.js';
import { type RawStep, type RuleContext, formatLocation, inComplianceTree, stepLabel } from './model.js';
import { pathProblem } from './path-syntax.js';

const CONTRIBUTES_IF = /^prior_step\.([^.\s]+)\.passed$/;
const PRIOR_STEP = /\{\{\s*prior_step\.([^.}\s]+)\.([^{}]*?)\s*\}\}|\{\{\s*prior_step\.([^.}\s]+)\./g;
/** engine/substitute.ts's `$context.` token; the name ends at the first `.` or `[`. */
const CONTEXT = /\$context\.([A-Za-z_][\w-]*)(?:\.[\w-]+|\[\d+\])*/g;
/** `{{context.<name>…}}` (engine/substitute.ts lookupMustache). */
const MUSTACHE_CONTEXT = /\{\{\s*context\.([^.[\s}]+)[^{}]*\}\}/g;
const WEBHOOK_URL = /\{\{\s*runner\.webhook_url:([^}\s]+)\s*\}\}/g;
/** Prose may mention substitutions without using them; the runner substitutes nothing in an example answer or an annotation. */
const PROSE_KEYS = new Set([
  'title',
  'narrative',
  'expected',
  'description',
  'summary',
  'reviewer_checks',
  '$comment',
  'sample_response',
]);

export function checkStepReferences(ctx: RuleContext): void {
  const order = new Map<string, number>();
  ctx.steps.forEach((s, i) => {
    if (s.id && !order.has(s.id)) order.set(s.id, i);
  });
  const context = contextNames(ctx);
  ctx.steps.forEach((step, position) => {
    const refer = (id: string, path: DataPath, what: string, mustBeEarlier: boolean, token?: Token, name = false) =>
      checkReference(ctx, order, step, position, { id, path, what, mustBeEarlier, name, ...(token ? { token } : {}) });

    const gate = step.raw.contributes_if;
    if (typeof gate === 'string') {
      const match = CONTRIBUTES_IF.exec(gate.trim());
      if (!match) {
        ctx.sink.error(
          'contributes_if_invalid',
          ctx.at([...step.path, 'contributes_if']),
          `contributes_if "${gate}" in ${stepLabel(step)} is not a supported expression`,
          'the only supported form is "prior_step.<step_id>.passed"',
        );
      } else refer(match[1]!, [...step.path, 'contributes_if'], 'contributes_if', true);
    }
    if (typeof step.raw.triggered_by === 'string') {
      refer(step.raw.triggered_by, [...step.path, 'triggered_by'], 'triggered_by', true);
    }
    forEachString(step.raw, step.path, (text, path) => {
      const seen = occurrences();
      for (const m of text.matchAll(PRIOR_STEP)) {
        const id = m[1] ?? m[3]!;
        const token = { text: m[0], occurrence: seen(m[0]) };
        refer(id, path, `{{prior_step.${id}...}}`, true, token);
        const field = m[2];
        const problem = field === undefined ? undefined : pathProblem(field);
        if (problem) {
          ctx.sink.error(
            'path_syntax',
            ctx.tokenAt(path, token.text, token.occurrence),
            `the field of ${m[0]} in ${stepLabel(step)}: ${problem}`,
            'write it as dotted keys with [n] indexes, e.g. {{prior_step.create_buy.media_buy_id}}',
          );
        }
      }
      for (const m of text.matchAll(WEBHOOK_URL))
        refer(m[1]!, path, `{{runner.webhook_url:${m[1]}}}`, false, { text: m[0], occurrence: seen(m[0]) }, true);
      for (const m of [...text.matchAll(CONTEXT), ...text.matchAll(MUSTACHE_CONTEXT)]) {
        checkContextName(ctx, context, step, position, m[1]!, { path, token: { text: m[0], occurrence: seen(m[0]) } });
      }
    });
    const inputs = step.raw.context_inputs;
    if (Array.isArray(inputs)) {
      inputs.forEach((input, i) => {
        if (isPlainObject(input) && typeof input.key === 'string' && input.key !== '') {
          checkContextName(ctx, context, step, position, input.key, {
            path: [...step.path, 'context_inputs', i, 'key'],
            what: `context_inputs[${i}].key "${input.key}"`,
          });
        }
      });
    }
  });
}

interface Token {
  /** The placeholder as written in the (parsed) string. */
  text: string;
  /** How many identical placeholders come before it in the same string. */
  occurrence: number;
}

/** Counts the placeholders of one string as they are met, for locating the n-th identical one. */
function occurrences(): (token: string) => number {
  const counts = new Map<string, number>();
  return (token) => {
    const n = counts.get(token) ?? 0;
    counts.set(token, n + 1);
    return n;
  };
}

interface ContextNames {
  /** The root `context:` block's names. */
  root: ReadonlySet<string>;
  /** Each captured name → the positions (in ctx.steps) of the steps that capture it. */
  captured: ReadonlyMap<string, number[]>;
}

function contextNames(ctx: RuleContext): ContextNames {
  const root = new Set(isPlainObject(ctx.root.context) ? Object.keys(ctx.root.context) : []);
  const captured = new Map<string, number[]>();
  ctx.steps.forEach((step, position) => {
    const outputs = step.raw.context_outputs;
    if (!Array.isArray(outputs)) return;
    for (const output of outputs) {
      // `key:` is the corpus' other spelling of `name:` (normalise.ts).
      const name = isPlainObject(output) ? (typeof output.name === 'string' ? output.name : output.key) : undefined;
      if (typeof name !== 'string') continue;
      // `generate:` values are minted at run start (storyboard-schema.yaml > context_outputs): every step may read them.
      if (isPlainObject(output) && output.generate !== undefined) {
        root.add(name);
        continue;
      }
      const at = captured.get(name) ?? [];
      at.push(position);
      captured.set(name, at);
    }
  });
  return { root, captured };
}

function checkContextName(
  ctx: RuleContext,
  names: ContextNames,
  step: RawStep,
  position: number,
  name: string,
  where: { path: DataPath; token?: Token; what?: string },
): void {
  if (names.root.has(name)) return;
  const by = names.captured.get(name) ?? [];
  if (by.some((p) => p < position)) return;
  const at = where.token ? ctx.tokenAt(where.path, where.token.text, where.token.occurrence) : ctx.at(where.path);
  const what = where.what ?? where.token!.text;
  const later = by.find((p) => p >= position);
  // A newer format version may provide names this one does not declare (strictKeys: false): then a warning.
  const report = (message: string, hint: string) =>
    ctx.strictKeys
      ? ctx.sink.error('unknown_context_reference', at, message, hint)
      : ctx.sink.warning('unknown_context_reference', at, message, hint);
  if (later !== undefined) {
    const capturer = ctx.steps[later]!;
    const self = later === position;
    report(
      `${what} in ${stepLabel(step)} reads "${name}", which ${self ? 'this step captures itself' : `${stepLabel(capturer)} at ${formatLocation(ctx.at(capturer.path))} captures`} only after this step has run`,
      self
        ? "a step's context_outputs are captured from its own answer: read the value with a later step"
        : 'move the capturing step before this one, or read another value',
    );
    return;
  }
  const known = [
    ...names.root,
    ...[...names.captured].filter(([, at]) => at.some((p) => p < position)).map(([n]) => n),
  ];
  const suggestion = closestMatch(name, known, name.length <= 8 ? 1 : 2);
  // The compliance corpus is written for the reference runner, whose per-task context extractors provide names no
  // step captures (`media_buy_id` after create_media_buy, `content_standards_id`, `governance_agent_url`). Nothing in
  // its text declares them, so only a near miss of a declared name is reported there (docs/troubleshooting.md).
  if (!suggestion && inComplianceTree(ctx)) return;
  report(
    `${what} in ${stepLabel(step)} reads "${name}", which no earlier step captures (context_outputs) and the storyboard's context: does not set`,
    suggestion
      ? `did you mean "${suggestion}"?`
      : known.length > 0
        ? `the context holds by then: ${known.slice(0, 12).join(', ')}${known.length > 12 ? ', …' : ''}; capture "${name}" with context_outputs on an earlier step, or set it in the storyboard's context:`
        : `capture "${name}" with context_outputs on an earlier step, or set it in the storyboard's context:`,
  );
}

interface Reference {
  id: string;
  path: DataPath;
  what: string;
  mustBeEarlier: boolean;
  /** A name of its own is allowed when it is no near miss of a step id (a receiver URL's key). */
  name: boolean;
  /** The placeholder the reference is written in, to locate it inside its string. */
  token?: Token;
}

function checkReference(
  ctx: RuleContext,
  order: Map<string, number>,
  step: RawStep,
  position: number,
  ref: Reference,
): void {
  const target = order.get(ref.id);
  const at = ref.token ? ctx.tokenAt(ref.path, ref.token.text, ref.token.occurrence) : ctx.at(ref.path);
  if (target === undefined) {
    const candidates = [...order].filter(([, i]) => !ref.mustBeEarlier || i < position).map(([id]) => id);
    const suggestion = closestMatch(ref.id, candidates);
    if (ref.name && !suggestion) return;
    ctx.sink.error(
      'unknown_step_reference',
      at,
      `${ref.what} in ${stepLabel(step)} refers to step "${ref.id}", which this storyboard does not declare`,
      suggestion ? `did you mean "${suggestion}"?` : 'use the id of a step declared in this storyboard',
    );
  } else if (ref.mustBeEarlier && target >= position) {
    const later = ctx.steps[target]!;
    ctx.sink.error(
      'unknown_step_reference',
      at,
      `${ref.what} in ${stepLabel(step)} refers to ${stepLabel(later)} at ${formatLocation(ctx.at(later.path))}, which has not run yet`,
      'prior_step / triggered_by references must name a step that runs earlier; move one of the steps',
    );
  }
}

function forEachString(value: unknown, path: DataPath, visit: (text: string, path: DataPath) => void): void {
  if (typeof value === 'string') visit(value, path);
  else if (Array.isArray(value)) value.forEach((item, i) => forEachString(item, [...path, i], visit));
  else if (isPlainObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (!PROSE_KEYS.has(key) && !key.startsWith('x-')) forEachString(child, [...path, key], visit);
    }
  }
}
