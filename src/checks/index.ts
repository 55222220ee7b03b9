import { CHECK_KINDS } from './kinds.js';
import type { Check } from './types.js';

export type { Check, CheckInput, CheckVerdict, PriorAnswer, ResponseSet } from './types.js';
export type { Exchange } from '../model/exchange.js';
export { CHECK_KIND, CHECK_KINDS } from './kinds.js';

/**
 * The graders of checks/kinds.ts by name: one pure function per `check` kind of storyboard-schema.yaml > "Validation".
 * `any_of` is graded by the engine (it reads the run's branch-set contributions).
 */
export const checks: Readonly<Record<string, Check>> = Object.fromEntries(
  CHECK_KINDS.flatMap((kind) => (kind.grade ? [[kind.name, kind.grade]] : [])),
);
