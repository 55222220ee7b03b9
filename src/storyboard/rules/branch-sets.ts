/**
 * Branch sets and contributions (storyboard-schema.yaml, "Branch sets" →
 * "Authoring rules", and Step → contributes / contributes_to).
 *
 * All are errors: each one makes the any_of grading silently wrong — a
 * contribution that lands on the wrong flag, a required branch that fails the
 * storyboard although a peer succeeded, or a flag nothing ever grades.
 * The one exception is an ungraded flag in a storyboard with
 * `requires_scenarios`: a listed scenario may assert it, which a single-file
 * load cannot see, so that case is a warning.
 */
import { closestMatch } from '../did-you-mean.js';
import { isPlainObject } from '../paths.js';
import type { DataPath } from '../source-map.js';
import type { SourceLocation } from '../../model/storyboard.js';
import { type RawPhase, type RuleContext, formatLocation, phaseLabel, stepLabel, stringOrUndefined } from './model.js';

/** The only semantics AdCP defines today ("semantics: `any_of`. No other value is supported today."). */
const SUPPORTED_SEMANTICS = ['any_of'];

interface DeclaredBranchSet {
  id: string;
  semantics: unknown;
  phase: RawPhase;
  at: SourceLocation;
}

export function checkBranchSets(ctx: RuleContext): void {
  const declared = checkBranchSetDeclarations(ctx);
  checkContributions(ctx);
  checkMixedMode(ctx, declared);
  checkEveryFlagIsGraded(ctx);
}

function branchSetOf(phase: RawPhase): { id: string | undefined; raw: Record<string, unknown> } | undefined {
  const raw = phase.raw.branch_set;
  return isPlainObject(raw) ? { id: stringOrUndefined(raw.id), raw } : undefined;
}

function checkBranchSetDeclarations(ctx: RuleContext): Map<string, DeclaredBranchSet> {
  const declared = new Map<string, DeclaredBranchSet>();
  for (const phase of ctx.phases) {
    const branchSet = branchSetOf(phase);
    if (!branchSet) continue;
    const path: DataPath = [...phase.path, 'branch_set'];
    if (phase.raw.optional !== true) {
      ctx.sink.error(
        'branch_set_not_optional',
        ctx.keyAt(Object.hasOwn(phase.raw, 'optional') ? [...phase.path, 'optional'] : path),
        `${phaseLabel(phase)} declares branch_set${branchSet.id ? ` "${branchSet.id}"` : ''} but is not optional`,
        'add `optional: true` to the phase: a failing required phase fails the storyboard even when a peer branch succeeded, defeating any_of',
      );
    }
    const semantics = branchSet.raw.semantics;
    const earlier = branchSet.id ? declared.get(branchSet.id) : undefined;
    if (earlier && earlier.semantics !== semantics) {
      // Reported as a conflict (the more specific mistake), not also as unsupported.
      ctx.sink.error(
        'branch_set_semantics_conflict',
        ctx.at([...path, 'semantics']),
        `branch_set "${branchSet.id}" has semantics ${JSON.stringify(semantics)} here but ${JSON.stringify(earlier.semantics)} in ${phaseLabel(earlier.phase)} at ${formatLocation(earlier.at)}`,
        'all phases sharing a branch_set id must declare the same semantics',
      );
    } else if (typeof semantics === 'string' && !SUPPORTED_SEMANTICS.includes(semantics)) {
      ctx.sink.error(
        'branch_set_unsupported_semantics',
        ctx.at([...path, 'semantics']),
        `branch_set semantics "${semantics}" in ${phaseLabel(phase)} is not supported`,
        `use ${SUPPORTED_SEMANTICS.map((s) => `"${s}"`).join(', ')} — the only semantics AdCP defines today`,
      );
    }
    if (branchSet.id && !earlier) declared.set(branchSet.id, { id: branchSet.id, semantics, phase, at: ctx.at(path) });
  }
  return declared;
}

function checkContributions(ctx: RuleContext): void {
  for (const step of ctx.steps) {
    const hasBoolean = Object.hasOwn(step.raw, 'contributes');
    const hasString = Object.hasOwn(step.raw, 'contributes_to');
    const branchSet = branchSetOf(step.phase);
    if (hasBoolean && hasString) {
      ctx.sink.error(
        'contributes_with_contributes_to',
        ctx.keyAt([...step.path, 'contributes']),
        `${stepLabel(step)} declares both contributes and contributes_to`,
        branchSet
          ? "keep `contributes: true` (it resolves to the phase's branch_set id) and remove contributes_to"
          : 'keep `contributes_to: <flag>` and remove contributes',
      );
      continue;
    }
    if (step.raw.contributes === true && !branchSet) {
      const flagHint =
        step.phase.raw.optional === true
          ? ' or declare `branch_set: { id: <flag>, semantics: any_of }` on the phase'
          : '';
      ctx.sink.error(
        'contributes_outside_branch_set',
        ctx.keyAt([...step.path, 'contributes']),
        `${stepLabel(step)} uses contributes: true, but ${phaseLabel(step.phase)} declares no branch_set`,
        `use \`contributes_to: <flag>\`${flagHint}`,
      );
    }
    const target = step.raw.contributes_to;
    if (typeof target === 'string' && branchSet?.id && target !== branchSet.id) {
      ctx.sink.error(
        'contributes_to_mismatch',
        ctx.at([...step.path, 'contributes_to']),
        `${stepLabel(step)} contributes to "${target}", but its ${phaseLabel(step.phase)} belongs to branch_set "${branchSet.id}"`,
        `inside a branch_set phase use \`contributes: true\` (or contributes_to: "${branchSet.id}")`,
      );
    }
  }
}

/**
 * "If any phase declares `branch_set: { id: X }`, every optional phase whose
 * steps contribute to X MUST also declare it" — otherwise a runner that
 * prefers the explicit declaration grades a single-member set.
 */
function checkMixedMode(ctx: RuleContext, declared: Map<string, DeclaredBranchSet>): void {
  for (const phase of ctx.phases) {
    if (phase.raw.optional !== true || branchSetOf(phase)) continue;
    const step = phase.steps.find(
      (s) => typeof s.raw.contributes_to === 'string' && declared.has(s.raw.contributes_to),
    );
    if (!step) continue;
    const flag = step.raw.contributes_to as string;
    const peer = declared.get(flag)!;
    ctx.sink.error(
      'branch_set_mixed_mode',
      ctx.at(phase.path),
      `optional ${phaseLabel(phase)} contributes to "${flag}" but does not declare branch_set "${flag}" like ${phaseLabel(peer.phase)} at ${formatLocation(peer.at)}`,
      `add \`branch_set: { id: ${flag}, semantics: any_of }\` to the phase`,
    );
  }
}

/**
 * Every contributed flag (and every declared branch set) needs an
 * `assert_contribution` step with `check: any_of` listing it — otherwise
 * nothing grades it (the spec's `orphan_contribution`).
 */
function checkEveryFlagIsGraded(ctx: RuleContext): void {
  const graded = new Set<string>();
  for (const step of ctx.steps) {
    for (const validation of step.validations) {
      if (validation.raw.check !== 'any_of' || !Array.isArray(validation.raw.allowed_values)) continue;
      for (const flag of validation.raw.allowed_values) if (typeof flag === 'string') graded.add(flag);
    }
  }
  const firstSite = new Map<string, DataPath>();
  const note = (flag: string | undefined, path: DataPath) => {
    if (flag && !firstSite.has(flag)) firstSite.set(flag, path);
  };
  for (const phase of ctx.phases) {
    const branchSet = branchSetOf(phase);
    note(branchSet?.id, [...phase.path, 'branch_set', 'id']);
    for (const step of phase.steps) {
      const flag = step.raw.contributes_to;
      // A flag that differs from its phase's branch_set id is already a contributes_to_mismatch.
      if (typeof flag === 'string' && (!branchSet?.id || flag === branchSet.id))
        note(flag, [...step.path, 'contributes_to']);
    }
  }
  const scenarios = Array.isArray(ctx.root.requires_scenarios) && ctx.root.requires_scenarios.length > 0;
  for (const [flag, path] of firstSite) {
    if (graded.has(flag)) continue;
    const suggestion = closestMatch(flag, graded);
    const message = `contribution flag "${flag}" is never graded: no assert_contribution step lists it in a \`check: any_of\` allowed_values`;
    const hint = suggestion
      ? `did you mean "${suggestion}"?`
      : `add a step \`task: assert_contribution\` with \`validations: [{ check: any_of, allowed_values: [${flag}] }]\` after the contributing phases`;
    if (scenarios)
      ctx.sink.warning(
        'orphan_contribution',
        ctx.at(path),
        `${message} (it may be graded by a scenario in requires_scenarios)`,
        hint,
      );
    else ctx.sink.error('orphan_contribution', ctx.at(path), message, hint);
  }
}
