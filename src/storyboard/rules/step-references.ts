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
 *   "{{runner.webhook_url:<id>}}"                 (any step of the storyboard)
 */
import { closestMatch } from '../did-you-mean.js';
import { isPlainObject } from '../paths.js';
import type { DataPath } from '../source-map.js';
import { type RawStep, type RuleContext, formatLocation, stepLabel } from './model.js';

const CONTRIBUTES_IF = /^prior_step\.([^.\s]+)\.passed$/;
const PRIOR_STEP = /\{\{\s*prior_step\.([^.}\s]+)\./g;
const WEBHOOK_URL = /\{\{\s*runner\.webhook_url:([^}\s]+)\s*\}\}/g;
/** Prose may mention substitutions without using them. */
const PROSE_KEYS = new Set(['title', 'narrative', 'expected', 'description', 'summary', 'reviewer_checks', '$comment']);

export function checkStepReferences(ctx: RuleContext): void {
  const order = new Map<string, number>();
  ctx.steps.forEach((s, i) => {
    if (s.id && !order.has(s.id)) order.set(s.id, i);
  });
  ctx.steps.forEach((step, position) => {
    const refer = (id: string, path: DataPath, what: string, mustBeEarlier: boolean) =>
      checkReference(ctx, order, step, position, { id, path, what, mustBeEarlier });

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
      for (const m of text.matchAll(PRIOR_STEP)) refer(m[1]!, path, `{{prior_step.${m[1]}...}}`, true);
      for (const m of text.matchAll(WEBHOOK_URL)) refer(m[1]!, path, `{{runner.webhook_url:${m[1]}}}`, false);
    });
  });
}

interface Reference {
  id: string;
  path: DataPath;
  what: string;
  mustBeEarlier: boolean;
}

function checkReference(ctx: RuleContext, order: Map<string, number>, step: RawStep, position: number, ref: Reference): void {
  const target = order.get(ref.id);
  const at = ctx.at(ref.path);
  if (target === undefined) {
    const candidates = [...order].filter(([, i]) => !ref.mustBeEarlier || i < position).map(([id]) => id);
    const suggestion = closestMatch(ref.id, candidates);
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
      if (!PROSE_KEYS.has(key)) forEachString(child, [...path, key], visit);
    }
  }
}
