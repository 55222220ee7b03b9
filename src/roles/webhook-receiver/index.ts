/**
 * The webhook-receiver role (test-kits/webhook-receiver-runner.yaml): the runner's webhook tasks, graded on what the
 * run's receiver (src/webhooks/) observed (webhooks.ts), the `{{runner.webhook_*}}` URLs it mints before the
 * triggering call, and the skips of a run that hosts no receiver.
 */
import type { SkipResult } from '../../model/records.js';
import type { Step } from '../../model/storyboard.js';
import type { RoleRun, RoleSession, RunnerRole } from '../../engine/role.js';
import { WEBHOOK_CONTRACT, WEBHOOK_TASKS, WebhookRun } from './webhooks.js';

export const webhookReceiverRole: RunnerRole = {
  name: 'webhook-receiver',
  tasks: WEBHOOK_TASKS,
  open: (run) => webhookSession(run),
};

function webhookSession(run: RoleRun): RoleSession {
  const { settings, storyboard } = run;
  const webhooks = new WebhookRun(storyboard, {
    sink: settings.webhooks,
    timeoutMs: settings.timeoutMs,
    schemas: settings.schemas,
    file: storyboard.file,
    ...(settings.urlGuard ? { urlGuard: settings.urlGuard } : {}),
    ...(settings.webhookSignerJwks ? { signerJwks: settings.webhookSignerJwks } : {}),
  });
  return {
    storyboardSkip: () => webhooks.storyboardSkip(settings.testKit),
    gate: ({ step, task }) => (WEBHOOK_TASKS.has(task) ? receiverSkip(step, task, webhooks.hasReceiver) : undefined),
    // Runner-only, and the state it needs is its `triggered_by` step's webhook: that step, not the cascade, gates it.
    run: async ({ step, task }, result) => ({
      result: await webhooks.assert(step, task, result, run.scope(), run.results, run.transport().url),
    }),
    prepare: ({ step }) => webhooks.prepare(step.sample_request),
    variables: webhooks.variables,
    secrets: () => webhooks.secrets(),
    close: () => webhooks.close(),
  };
}

/** The skip of a webhook task this run cannot grade; `receiver`: whether the run hosts a webhook receiver. */
function receiverSkip(step: Step, task: string, receiver: boolean): SkipResult | undefined {
  const contract = typeof step.requires_contract === 'string' ? step.requires_contract : undefined;
  // A receiver satisfies webhook_receiver_runner, and only that contract.
  if (receiver && (contract === undefined || contract === WEBHOOK_CONTRACT)) return undefined;
  // storyboard-schema.yaml > expect_webhook > requires_contract: "step grades as not_applicable (not fail) when the
  // named test-kit contract is not in scope". Without it, the receiver the step needs is a harness contract this
  // run cannot satisfy: runner-output-contract.yaml > skip_result > unsatisfied_contract.
  return contract
    ? {
        reason: 'not_applicable',
        detail: `${task} requires the test-kit contract "${contract}"${contract === WEBHOOK_CONTRACT ? ' (a webhook receiver)' : ''}, which is not in scope for this run`,
      }
    : {
        reason: 'unsatisfied_contract',
        detail: `${task} needs the runner's webhook receiver (contract "${WEBHOOK_CONTRACT}"), and this run hosts none (plugin option webhooks: { receiver: 'loopback' }, or --webhook-receiver)`,
      };
}
