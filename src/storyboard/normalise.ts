/**
 * Raw (schema-valid, rule-clean) data → the `Storyboard` the compiler and the
 * engine read. Keeps every key the author wrote, adds `loc`, and resolves the
 * format's shorthands so consumers read one field:
 *
 * - `steps` / `validations` default to `[]` (phases whose steps the runner
 *   synthesizes have none);
 * - `provides_state_for: x` → `[x]` (deprecated `peer_substitutes_for` feeds it);
 * - `contributes: true` in a branch_set phase → also `contributes_to: <branch_set.id>`
 *   (storyboard-schema.yaml, Step → contributes);
 * - context_outputs `key:` (used by part of the corpus) → also `name:`;
 * - deprecated `require_all_bindings_observed` → `require_every_binding_observed`.
 */
import { isPlainObject } from './paths.js';
import type { DataPath, SourceMap } from './source-map.js';
import type { Phase, Step, Storyboard, Validation } from '../model/storyboard.js';

type Raw = Record<string, unknown>;

export function normaliseStoryboard(raw: Raw, map: SourceMap, file: string): Storyboard {
  const phases = (raw.phases as Raw[]).map((phase, p) => normalisePhase(phase, ['phases', p], map));
  return { ...raw, phases, loc: map.valueLocation([]), file } as Storyboard;
}

function normalisePhase(raw: Raw, path: DataPath, map: SourceMap): Phase {
  const branchSetId = isPlainObject(raw.branch_set) ? raw.branch_set.id : undefined;
  const steps = ((raw.steps as Raw[] | undefined) ?? []).map((step, s) =>
    normaliseStep(step, [...path, 'steps', s], map, typeof branchSetId === 'string' ? branchSetId : undefined),
  );
  return { ...raw, steps, loc: map.valueLocation(path) } as Phase;
}

function normaliseStep(raw: Raw, path: DataPath, map: SourceMap, branchSetId: string | undefined): Step {
  const step: Raw = { ...raw };
  step.validations = ((raw.validations as Raw[] | undefined) ?? []).map(
    (v, i): Validation => ({ ...v, loc: map.valueLocation([...path, 'validations', i]) }) as Validation,
  );
  const provides = raw.provides_state_for ?? raw.peer_substitutes_for;
  if (provides !== undefined) step.provides_state_for = Array.isArray(provides) ? [...provides] : [provides];
  if (raw.contributes === true && branchSetId !== undefined && raw.contributes_to === undefined) {
    step.contributes_to = branchSetId;
  }
  if (Array.isArray(raw.context_outputs)) {
    step.context_outputs = raw.context_outputs.map((o: unknown) =>
      isPlainObject(o) && o.name === undefined && typeof o.key === 'string' ? { ...o, name: o.key } : o,
    );
  }
  if (raw.require_all_bindings_observed !== undefined && raw.require_every_binding_observed === undefined) {
    step.require_every_binding_observed = raw.require_all_bindings_observed;
  }
  step.loc = map.valueLocation(path);
  return step as unknown as Step;
}
