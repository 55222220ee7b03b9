/**
 * `provides_state_for` (storyboard-schema.yaml, Step → provides_state_for,
 * "Validation rules … fail at parse time"): a substitute step whose pass
 * establishes the state of peer step(s) in the same phase. All rules are
 * errors, as the spec says; each has its own id so reports name the fix.
 */
import { closestMatch } from '../did-you-mean.js';
import type { DataPath } from '../source-map.js';
import { type RawPhase, type RawStep, type RuleContext, phaseLabel, stepLabel } from './model.js';

/** The declared targets with the path of each, from the spec field or its deprecated synonym. */
function declaredStateTargets(step: RawStep): { key: string; targets: { id: string; path: DataPath }[] } | undefined {
  const key = Object.hasOwn(step.raw, 'provides_state_for')
    ? 'provides_state_for'
    : Object.hasOwn(step.raw, 'peer_substitutes_for')
      ? 'peer_substitutes_for'
      : undefined;
  if (!key) return undefined;
  const value = step.raw[key];
  const base: DataPath = [...step.path, key];
  if (typeof value === 'string') return { key, targets: [{ id: value, path: base }] };
  if (!Array.isArray(value)) return { key, targets: [] };
  const targets = value.flatMap((id, i) => (typeof id === 'string' ? [{ id, path: [...base, i] }] : []));
  return { key, targets };
}

export function checkProvidesStateFor(ctx: RuleContext): void {
  for (const phase of ctx.phases) {
    const edges = new Map<string, { target: string; path: DataPath }[]>();
    for (const step of phase.steps) {
      const declared = declaredStateTargets(step);
      if (!declared) continue;
      if (step.raw.stateful !== true) {
        ctx.sink.error(
          'provides_state_for_substitute_not_stateful',
          ctx.keyAt([...step.path, declared.key]),
          `${stepLabel(step)} declares ${declared.key} but is not stateful`,
          'add `stateful: true` to the step: a stateless step cannot establish state for its peers',
        );
      }
      for (const { id, path } of declared.targets) {
        const ok = checkTarget(ctx, phase, step, declared.key, id, path);
        if (ok && step.id) edges.set(step.id, [...(edges.get(step.id) ?? []), { target: id, path }]);
      }
    }
    reportCycles(ctx, phase, edges);
  }
}

function checkTarget(
  ctx: RuleContext,
  phase: RawPhase,
  step: RawStep,
  key: string,
  id: string,
  path: DataPath,
): boolean {
  const at = ctx.at(path);
  if (id === step.id) {
    ctx.sink.error(
      'provides_state_for_self',
      at,
      `${stepLabel(step)} lists itself in ${key}`,
      `remove "${id}" from ${key}`,
    );
    return false;
  }
  const target = phase.steps.find((s) => s.id === id);
  if (!target) {
    const elsewhere = ctx.steps.find((s) => s.id === id);
    if (elsewhere) {
      ctx.sink.error(
        'provides_state_for_cross_phase',
        at,
        `${stepLabel(step)} provides state for "${id}", which is in ${phaseLabel(elsewhere.phase)}, not in ${phaseLabel(phase)}`,
        'provides_state_for is same-phase only; carry state across phases with context_outputs / context_inputs',
      );
    } else {
      const suggestion = closestMatch(
        id,
        phase.steps.flatMap((s) => (s.id && s !== step ? [s.id] : [])),
      );
      ctx.sink.error(
        'provides_state_for_unknown_target',
        at,
        `${stepLabel(step)} provides state for "${id}", but ${phaseLabel(phase)} has no such step`,
        suggestion ? `did you mean "${suggestion}"?` : `name a step id of ${phaseLabel(phase)}`,
      );
    }
    return false;
  }
  if (target.raw.stateful !== true) {
    ctx.sink.error(
      'provides_state_for_target_not_stateful',
      at,
      `${stepLabel(step)} provides state for ${stepLabel(target)}, which is not stateful`,
      `add \`stateful: true\` to ${stepLabel(target)} or remove it from ${key}: a stateless peer has no state to substitute`,
    );
  }
  return true;
}

/** The peer graph of a phase must be acyclic; report each cycle once, where it closes. */
function reportCycles(
  ctx: RuleContext,
  phase: RawPhase,
  edges: Map<string, { target: string; path: DataPath }[]>,
): void {
  const done = new Set<string>();
  const onStack: string[] = [];
  const visit = (node: string): void => {
    onStack.push(node);
    for (const { target, path } of edges.get(node) ?? []) {
      const start = onStack.indexOf(target);
      if (start >= 0) {
        const cycle = [...onStack.slice(start), target].join(' → ');
        ctx.sink.error(
          'provides_state_for_cycle',
          ctx.at(path),
          `provides_state_for cycle in ${phaseLabel(phase)}: ${cycle}`,
          'a substitute cannot also be substituted by its target; keep the declaration on one side only',
        );
      } else if (!done.has(target)) visit(target);
    }
    onStack.pop();
    done.add(node);
  };
  for (const node of edges.keys()) if (!done.has(node)) visit(node);
}
