/**
 * Paths in the runner's dialect (model/path.ts: `a.b[0].c`, `items[*].id`) must parse. One that does not is reported
 * by the runner only after the agent has been called, at the step; here it is a load error at the path itself
 * (rule `path_syntax`):
 *
 *   validations[].path, validations[].source.path / target.path (refs_resolve),
 *   context_outputs[].path (after its `task_completion.` prefix),
 *   auth.from_test_kit when it is a path (the credential in the test kit),
 *   the field of `{{prior_step.<id>.<field>}}` (rules/step-references.ts).
 *
 * `context_inputs[].inject_at` has its own rule (`context_input_path`, step-fields.ts). The parser is the engine's;
 * the one addition is a trailing `.`, an empty last segment the engine reads past silently.
 */
import { parsePath, PathSyntaxError } from '../../model/path.js';
import { TASK_COMPLETION_PREFIX } from '../../model/runner-tasks.js';
import { isPlainObject } from '../paths.js';
import type { DataPath } from '../source-map.js';
import { type RuleContext, stepLabel } from './model.js';

/** Why `path` is not a path of the runner's dialect, or undefined when it is one. */
export function pathProblem(path: string): string | undefined {
  try {
    parsePath(path);
  } catch (error) {
    if (error instanceof PathSyntaxError) return error.message;
    throw error;
  }
  if (path.endsWith('.'))
    return `invalid path "${path}": empty segment at the end. Paths look like "a.b[0].c" or "items[*].id".`;
  return undefined;
}

export function checkPathSyntax(ctx: RuleContext): void {
  for (const step of ctx.steps) {
    const report = (path: DataPath, text: string, what: string) => {
      const problem = pathProblem(text);
      if (problem)
        ctx.sink.error(
          'path_syntax',
          ctx.at(path),
          `${what} in ${stepLabel(step)}: ${problem}`,
          'write the path as dotted keys with [n] indexes or [*], e.g. "adcp.major_versions" or "products[0].product_id"',
        );
    };
    for (const validation of step.validations) {
      const raw = validation.raw;
      if (typeof raw.path === 'string')
        report([...validation.path, 'path'], raw.path, `validations[${validation.index}].path`);
      for (const side of ['source', 'target'] as const) {
        const end = raw[side];
        if (isPlainObject(end) && typeof end.path === 'string')
          report([...validation.path, side, 'path'], end.path, `validations[${validation.index}].${side}.path`);
      }
    }
    // The credential's path in the test kit: resolved only when the step runs, where a bad one was an internal error.
    const auth = step.raw.auth;
    if (isPlainObject(auth) && typeof auth.from_test_kit === 'string')
      report([...step.path, 'auth', 'from_test_kit'], auth.from_test_kit, 'auth.from_test_kit');
    const outputs = step.raw.context_outputs;
    if (Array.isArray(outputs)) {
      outputs.forEach((output, i) => {
        if (!isPlainObject(output) || typeof output.path !== 'string') return;
        const inner = output.path.startsWith(TASK_COMPLETION_PREFIX)
          ? output.path.slice(TASK_COMPLETION_PREFIX.length)
          : output.path;
        report([...step.path, 'context_outputs', i, 'path'], inner, `context_outputs[${i}].path`);
      });
    }
  }
}
