/**
 * The storyboard authoring rules checked at load time — the cross-field
 * constraints a JSON Schema cannot express. Each diagnostic has a stable rule
 * id (documented in docs and used by fixtures/broken/).
 *
 * Severity policy:
 *   error   — the spec says the storyboard must be rejected ("storyboard-load
 *             error", "fail at parse time", "DISALLOWED", "MUST NOT"), or
 *             running it would grade something other than what the author
 *             meant (a contribution to the wrong flag, a reference that can
 *             never resolve, a misspelled check that would pass as
 *             not_applicable).
 *   warning — the storyboard runs as written but probably not as intended
 *             (a deprecated spelling, a missing test kit; with
 *             `strictKeys: false`, a key that looks like a typo or a check
 *             this format version does not define — errors by default).
 */
import { checkAuthShape } from './auth.js';
import { checkBranchSets } from './branch-sets.js';
import { checkUniqueIds } from './ids.js';
import type { RuleContext } from './model.js';
import { checkPathSyntax } from './path-syntax.js';
import { checkProvidesStateFor } from './provides-state-for.js';
import { checkSampleRequests } from './sample-request.js';
import { checkStepFields } from './step-fields.js';
import { checkStepReferences } from './step-references.js';
import { checkTaskNames } from './tasks.js';
import { checkTestKitReference } from './test-kit-reference.js';
import { checkValidations } from './validations.js';

export { buildRuleContext, type RuleContext } from './model.js';

const RULES: ReadonlyArray<(ctx: RuleContext) => void> = [
  checkUniqueIds,
  checkBranchSets,
  checkProvidesStateFor,
  checkValidations,
  checkAuthShape,
  checkStepReferences,
  checkStepFields,
  checkTestKitReference,
  checkTaskNames,
  checkPathSyntax,
  checkSampleRequests,
];

export function checkAuthoringRules(ctx: RuleContext): void {
  for (const rule of RULES) rule(ctx);
}
