/**
 * A step's `task` (and `task_default`) must name a task: an AdCP task of the installed schemas, or one the runner
 * handles itself (adcp-tasks.ts). At run time a misspelt one is skipped `missing_tool` — the agent does not advertise
 * it — and a run of only that step passes; here it is caught before the agent is called.
 *
 * - A near miss of a known task (same name but for case and `-`/`_`, or a few edits relative to its length):
 *   error `misspelled_task`, with the task meant, whatever strictKeys says.
 * - Any other name: warning `unknown_task` — a custom task is legitimate (an agent's own tool), it just gets no request
 *   schema check and runs only where the agent advertises it.
 * - `task: $test_kit.…` is resolved at run time; its `task_default` is checked instead.
 *
 * Not checked when no AdCP schemas are installed (nothing to compare with).
 */
import { closestMatch } from '../did-you-mean.js';
import { type RawStep, type RuleContext, stepLabel } from './model.js';

/** Edits tolerated for a name of this length: one for short names, then about one in eight characters. */
function taskEditBudget(name: string): number {
  return name.length <= 8 ? 1 : name.length <= 16 ? 2 : 3;
}

export function checkTaskNames(ctx: RuleContext): void {
  const adcp = ctx.adcp;
  if (!adcp || adcp.adcpTasks.size === 0) return;
  const known = [...adcp.adcpTasks, ...adcp.runnerTasks];
  for (const step of ctx.steps) {
    const task = step.raw.task;
    if (typeof task !== 'string' || task === '') continue; // the schema reports it
    if (task.startsWith('$test_kit.')) {
      if (typeof step.raw.task_default === 'string') checkName(ctx, step, 'task_default', step.raw.task_default, known);
      continue;
    }
    checkName(ctx, step, 'task', task, known);
  }
}

function checkName(ctx: RuleContext, step: RawStep, key: 'task' | 'task_default', name: string, known: string[]): void {
  const adcp = ctx.adcp!;
  if (adcp.adcpTasks.has(name) || adcp.runnerTasks.has(name)) return;
  const at = ctx.at([...step.path, key]);
  const suggestion = closestMatch(name, known, taskEditBudget(name));
  if (suggestion) {
    ctx.sink.error(
      'misspelled_task',
      at,
      `${key} "${name}" in ${stepLabel(step)} is not an AdCP or runner task`,
      `did you mean "${suggestion}"? As written, no agent advertises it and the step is skipped as missing_tool`,
    );
    return;
  }
  ctx.sink.warning(
    'unknown_task',
    at,
    `${key} "${name}" in ${stepLabel(step)} is not an AdCP ${adcpVersion(ctx)}task or a runner task: a custom task`,
    'it runs only where the agent advertises a tool of that name, and its sample_request is not checked against a schema; if you meant an AdCP task, check the name against the schemas in @adcp/sdk',
  );
}

function adcpVersion(ctx: RuleContext): string {
  const version = ctx.adcp?.schemas?.version;
  return version ? `${version} ` : '';
}
