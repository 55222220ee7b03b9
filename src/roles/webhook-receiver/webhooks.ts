/**
 * The runner's webhook tasks (storyboard-schema.yaml > "Webhook-assertion
 * steps", test-kits/webhook-receiver-runner.yaml), graded against what the
 * run's receiver (src/webhooks/) observed — never sent to the agent:
 *
 *   expect_webhook                     a delivery at the trigger's URL within
 *                                      `timeout_seconds`; `filter`; the
 *                                      idempotency_key; `webhook_payload_schema_ref`;
 *                                      `expect_max_deliveries_per_logical_event`
 *   expect_webhook_retry_keys_stable   the receiver answers the trigger's URL
 *                                      `retry_trigger.http_status` `count` times,
 *                                      then 200; every delivery carries one
 *                                      byte-identical key (and, under 9421, a
 *                                      valid signature with a fresh nonce)
 *   expect_webhook_signature_valid     RFC 9421 webhook profile (src/signing),
 *                                      keys from the agent's brand.json
 *
 * Also the runner variables `{{runner.webhook_base}}` / `{{runner.webhook_url:<step>}}`
 * (URLs minted per step, registered with the receiver — and armed with the
 * retry policy of a retry step that names the step — before the triggering
 * call goes out), and `{{prior_step.<step>.operation_id}}`: the operation id
 * the runner put in that step's URL (the test kit: "the ID the RUNNER sets in
 * the path segment of push_notification_config.url").
 *
 * The operation id is the URL's unguessable part (a random UUID, 122 bits, per
 * (run, step)): the receiver answers only URLs minted and registered for a
 * run, so whoever knows one can make that step's `expect_webhook` pass. Only
 * the agent is sent it; every output (step records, reports, the NDJSON
 * stream, terminal text) shows `[redacted]` in its place — `secrets()` joins
 * the run's secret set, which every output is scrubbed of. An extra token
 * segment would not do: agents read the operation id from the URL's last path
 * segment, and the URL shape `<base>/step/<step>/<operation_id>` is the test
 * kit's.
 *
 * One (keyid, nonce) replay cache per storyboard run, shared by every
 * verified delivery (test kit > client_primitives.signature_replay_store).
 */
import { randomUUID } from 'node:crypto';
import type { SchemaRegistry } from '../../schemas/registry.js';
import { WEBHOOK_SIGNING } from '../../signing/index.js';
import type { Step, Storyboard, TestKit } from '../../model/storyboard.js';
import { isRoutable, type RetryPolicy, type WebhookDelivery, type WebhookSink } from '../../webhooks/receiver.js';
import type { UrlGuardOptions } from '../../transport/url-guard.js';
import type { OperatorJwks } from '../../webhooks/operator-jwks.js';
import { failsStep, type SkipResult, type StepResult, type ValidationResult } from '../../model/records.js';
import { substitute, type RunnerVariables, type SubstitutionScope } from '../../engine/substitute.js';
import { DeliverySignatures } from './signatures.js';
import { expectWebhook } from './expect-webhook.js';
import {
  triggerProblem,
  positive,
  parseBody,
  matchesFilter,
  signatureValidation,
  recordDeliveries,
  operatorJwksWarning,
  withOperatorKeySource,
  Validations,
  IDEMPOTENCY_KEY_PATTERN,
} from './deliveries.js';

export const WEBHOOK_TASKS: ReadonlySet<string> = new Set([
  'expect_webhook',
  'expect_webhook_retry_keys_stable',
  'expect_webhook_signature_valid',
]);
/** The test-kit contract a receiver satisfies. */
export const WEBHOOK_CONTRACT = 'webhook_receiver_runner';

const DEFAULT_TIMEOUT_SECONDS = 30;
const DEFAULT_RETRY_TIMEOUT_SECONDS = 90;
const DEFAULT_MIN_DELIVERIES = 2;
/** retry_replay_contract defaults and bounds (the loader already rejects values outside them). */
const DEFAULT_RETRY: RetryPolicy = { count: 3, httpStatus: 503 };
const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);
const WEBHOOK_URL_TOKEN = /\{\{\s*runner\.webhook_url:([^{}\s]+)\s*\}\}/g;

export interface WebhookRunOptions {
  /** The receiver; absent when the run hosts none. */
  sink?: WebhookSink;
  /** The run's per-step bound: caps every wait. */
  timeoutMs: number;
  schemas?: SchemaRegistry;
  file: string;
  /** The SSRF guard for brand.json / JWKS discovery (`allowHttp`; tests' lookup / dial). */
  urlGuard?: Omit<UrlGuardOptions, 'agentUrl'>;
  /** Local development: the operator's JWKS, verified against instead of the spec's discovery (operator-jwks.ts). */
  signerJwks?: () => Promise<OperatorJwks>;
}

/** What arrived at a step's receiver URL within its window. */
interface Seen {
  /** Every delivery at the URL. */
  observed: WebhookDelivery[];
  /** Those that match the step's filter. */
  matched: WebhookDelivery[];
  url: string;
  /** The window, as a message states it. */
  window: string;
  /** The filter's fields other than `operation_id`, which the payload must carry. */
  bodyFilter: Record<string, unknown>;
}

/** The record of the step named by `triggered_by`, if the run has one. */
function triggerOf(step: Step, results: ReadonlyMap<number, StepResult>): StepResult | undefined {
  return typeof step.triggered_by === 'string'
    ? [...results.values()].find((r) => r.step_id === step.triggered_by)
    : undefined;
}

/** The step's `filter`, substituted; a failed validation when a value in it did not resolve. */
function substitutedFilter(
  step: Step,
  scope: SubstitutionScope,
  v: Validations,
): { value: Record<string, unknown> } | { unresolved: ValidationResult } {
  const filterSubstituted = substitute((step.filter ?? {}) as Record<string, unknown>, scope);
  if (filterSubstituted.unresolved.length > 0) {
    return {
      unresolved: v.fail(
        'unresolved_substitution',
        'unresolved substitution',
        `${filterSubstituted.unresolved.join(', ')} in the step's filter did not resolve: the step that produces it failed, was skipped, or never ran`,
        {
          expected: filterSubstituted.unresolved,
        },
      ),
    };
  }
  return { value: filterSubstituted.value };
}

/** How long the step watches its URL: its timeout_seconds (else the task's default), capped by the run's step timeout. */
function watchWindow(step: Step, task: string, timeoutMs: number): { windowMs: number; window: string } {
  const seconds =
    positive(step.timeout_seconds) ??
    (task === 'expect_webhook_retry_keys_stable' ? DEFAULT_RETRY_TIMEOUT_SECONDS : DEFAULT_TIMEOUT_SECONDS);
  const windowMs = Math.min(seconds * 1000, timeoutMs);
  const window = `${Math.round(windowMs) / 1000} s${seconds * 1000 > timeoutMs ? ` (timeout_seconds ${seconds}, capped by the run's step timeout)` : ''}`;
  return { windowMs, window };
}

export class WebhookRun {
  private readonly operationIds = new Map<string, string>();
  private readonly opened = new Map<string, Promise<void>>();
  /** The deliveries' signatures, each verified once, against the run's one replay store. */
  private readonly signatures: DeliverySignatures;
  /** `{{runner.*}}` values; undefined without a receiver (those tokens then stay unresolved). */
  readonly variables?: RunnerVariables;

  constructor(
    private readonly storyboard: Storyboard,
    private readonly options: WebhookRunOptions,
  ) {
    this.signatures = new DeliverySignatures(options);
    const sink = options.sink;
    if (sink) {
      this.variables = {
        webhookBase: sink.baseUrl,
        webhookUrl: (stepId) =>
          isRoutable(stepId, 'x') ? `${sink.baseUrl}/step/${stepId}/${this.operationIdFor(stepId)}` : undefined,
        operationId: (stepId) => this.operationIds.get(stepId),
      };
    }
  }

  /**
   * The operation ids this run minted, in each spelling an output could carry
   * them (as minted, upper case, without dashes): the run's secret set
   * (run.ts `secrets()`), so no output names a URL the receiver accepts.
   */
  secrets(): string[] {
    return [...this.operationIds.values()].flatMap((id) => {
      const bare = id.replace(/-/g, '');
      return [id, id.toUpperCase(), bare, bare.toUpperCase()];
    });
  }

  get hasReceiver(): boolean {
    return this.options.sink !== undefined;
  }

  /**
   * storyboard-schema.yaml > Unresolved substitution behavior, preflight 1
   * ("the preferred behavior for absent webhook receivers"), for a storyboard
   * that exists for the receiver — its test kit is the receiver contract
   * (universal/webhook-emission.yaml: "Runners without a webhook receiver
   * grade the entire universal as not_applicable").
   */
  storyboardSkip(testKit: TestKit | undefined): SkipResult | undefined {
    if (this.hasReceiver || testKit?.id !== WEBHOOK_CONTRACT) return undefined;
    return {
      reason: 'not_applicable',
      detail: `unresolved_substitution: this storyboard needs the runner's webhook receiver (test-kit contract "${WEBHOOK_CONTRACT}"), and this run hosts none — enable it with the plugin option webhooks: { receiver: 'loopback' } or --webhook-receiver`,
    };
  }

  /**
   * Before a step's request is substituted: mint and register the URLs it
   * names, each armed with the retry policy of an `expect_webhook_retry_keys_stable`
   * step it triggers — so the first delivery already meets the policy.
   */
  async prepare(sampleRequest: unknown): Promise<string | undefined> {
    const sink = this.options.sink;
    if (!sink || sampleRequest === undefined) return undefined;
    const text = JSON.stringify(sampleRequest) ?? '';
    const stepIds = new Set([...text.matchAll(WEBHOOK_URL_TOKEN)].map((m) => m[1]!));
    try {
      await Promise.all(
        [...stepIds]
          .filter((id) => isRoutable(id, 'x'))
          .map((stepId) => {
            const operationId = this.operationIdFor(stepId);
            const key = `${stepId}/${operationId}`;
            let opening = this.opened.get(key);
            if (!opening) {
              opening = sink.open(stepId, operationId, this.retryPolicyFor(stepId));
              this.opened.set(key, opening);
            }
            return opening;
          }),
      );
      return undefined;
    } catch (error) {
      return `the run's webhook receiver could not register this step's URL: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /** Releases this run's URLs on the receiver. */
  async close(): Promise<void> {
    const sink = this.options.sink;
    if (!sink || this.opened.size === 0) return;
    const urls = [...this.opened.keys()].map((key) => {
      const [stepId, operationId] = key.split('/') as [string, string];
      return { stepId, operationId };
    });
    this.opened.clear();
    await Promise.allSettled([sink.release(urls)]);
  }

  /**
   * Grades one webhook step. `base` is the step's record so far; `results`
   * the run's records (for `triggered_by`); `scope` what `filter` substitutes
   * against; `agentUrl` where the agent's brand.json is.
   */
  async assert(
    step: Step,
    task: string,
    base: StepResult,
    scope: SubstitutionScope,
    results: ReadonlyMap<number, StepResult>,
    agentUrl: string,
  ): Promise<StepResult> {
    const sink = this.options.sink!;
    const record = (extra: Partial<StepResult>): StepResult => ({
      ...base,
      extraction: {
        path: 'none',
        note: "webhook step: graded on the deliveries the runner's receiver observed (nothing is sent to the agent)",
      },
      ...extra,
    });
    const trigger = triggerOf(step, results);
    const triggerSkip = trigger && triggerProblem(trigger);
    if (triggerSkip) return record({ passed: triggerSkip.reason !== 'prerequisite_failed', skip: triggerSkip });

    const v = new Validations(this.options.file, step, task);
    const filter = substitutedFilter(step, scope, v);
    if ('unresolved' in filter) return record({ validations: [filter.unresolved] });
    const { operation_id: filterOperation, ...bodyFilter } = filter.value;
    const target = this.target(step, filterOperation);
    if ('problem' in target)
      return record({ validations: [v.fail('webhook_target', 'which receiver URL to watch', target.problem)] });

    // An operator JWKS that cannot be loaded is the run's configuration, not the agent's signature: the step says so.
    const keysProblem = task === 'expect_webhook' ? undefined : await this.signatures.keysProblem();
    if (keysProblem) return record({ error: keysProblem });

    const { windowMs, window } = watchWindow(step, task, this.options.timeoutMs);
    const matches = (d: WebhookDelivery) => matchesFilter(d, bodyFilter);
    const cap =
      typeof step.expect_max_deliveries_per_logical_event === 'number'
        ? step.expect_max_deliveries_per_logical_event
        : undefined;
    const registered = typeof step.triggered_by === 'string' ? this.pushConfigOf(trigger) : undefined;
    const hmac = registered?.authentication !== undefined && registered.authentication !== null;

    if (task === 'expect_webhook_signature_valid' && hmac) {
      return record({
        passed: true,
        skip: {
          reason: 'not_applicable',
          detail: `${step.triggered_by} registered push_notification_config.authentication (the legacy HMAC/Bearer fallback): RFC 9421 webhook signing is not in effect, so the signature phase does not apply (universal/webhook-emission.yaml)`,
        },
      });
    }

    let observed: WebhookDelivery[];
    try {
      observed = await this.collect(sink, target, windowMs, (all) => {
        // The sender is done once the receiver accepted a delivery; a cap needs the whole window.
        if (task === 'expect_webhook_retry_keys_stable')
          return all.some((d) => matches(d) && d.answered >= 200 && d.answered < 300);
        return cap === undefined && all.some(matches);
      });
    } catch (error) {
      return record({
        error: `the run's webhook receiver could not be read: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
    const seen: Seen = {
      observed,
      matched: observed.filter(matches),
      url: `${sink.baseUrl}/step/${target.stepId}/${target.operationId}`,
      window,
      bodyFilter,
    };
    const deliveries = recordDeliveries(observed, matches);
    const validations = await this.gradeDeliveries(step, task, v, seen, { cap, hmac, agentUrl });
    return record({
      validations,
      passed: !validations.some(failsStep),
      webhook_deliveries: deliveries,
      ...(await this.operatorKeysWarning(validations)),
    });
  }

  /** The step's warning when a signature check used the operator's keys: the verdict is not one under the spec. */
  private async operatorKeysWarning(validations: ValidationResult[]): Promise<{ warnings?: string[] }> {
    if (!validations.some((v) => v.key_source === 'operator_jwks')) return {};
    const location = await this.signatures.operatorJwksLocation();
    return location === undefined ? {} : { warnings: [operatorJwksWarning(location)] };
  }

  /** The step's validations on what arrived at its URL within the window. */
  private async gradeDeliveries(
    step: Step,
    task: string,
    v: Validations,
    { observed, matched, url, window, bodyFilter }: Seen,
    { cap, hmac, agentUrl }: { cap: number | undefined; hmac: boolean; agentUrl: string },
  ): Promise<ValidationResult[]> {
    if (task === 'expect_webhook_retry_keys_stable') {
      return this.retryKeysStable(step, v, matched, url, window, hmac, agentUrl);
    }
    if (matched.length === 0) {
      const others =
        observed.length > 0
          ? `; ${observed.length} delivery(ies) arrived there but none matched the filter ${JSON.stringify(bodyFilter)}`
          : '';
      return [
        v.fail(
          'no_webhook_received',
          'a webhook arrives',
          `no webhook matching the filter arrived at ${url} within ${window}${others}`,
          { expected: 'a webhook delivery matching the filter', observed: observed.length },
        ),
      ];
    }
    const first = matched[0]!;
    if (task === 'expect_webhook_signature_valid') {
      const tag = typeof step.require_tag === 'string' ? step.require_tag : WEBHOOK_SIGNING.tag;
      const verdict = await this.signatures.verify(first, tag, agentUrl);
      return [signatureValidation(v, verdict, first, tag)];
    }
    return expectWebhook(step, v, first, matched, { cap, window, schemas: this.options.schemas });
  }

  private async retryKeysStable(
    step: Step,
    v: Validations,
    matched: WebhookDelivery[],
    url: string,
    window: string,
    hmac: boolean,
    agentUrl: string,
  ): Promise<ValidationResult[]> {
    const min = positive(step.expect_min_deliveries) ?? DEFAULT_MIN_DELIVERIES;
    const policy = this.retryPolicyFor(step.triggered_by as string) ?? DEFAULT_RETRY;
    if (matched.length < min) {
      const statuses = matched.map((d) => d.answered);
      return [
        v.fail(
          'insufficient_retries',
          `at least ${min} deliveries (the receiver answers ${policy.httpStatus} to the first ${policy.count})`,
          `${matched.length} delivery(ies) at ${url} within ${window}${statuses.length ? ` (answered ${statuses.join(', ')})` : ''}: the agent did not retry after the receiver's ${policy.httpStatus}`,
          { expected: `at least ${min} deliveries`, observed: matched.length },
        ),
      ];
    }
    const out: ValidationResult[] = [
      v.pass(
        `${matched.length} deliveries observed (the receiver answered ${matched.map((d) => d.answered).join(', ')})`,
      ),
    ];
    const keys = matched.map((d) => {
      const body = parseBody(d);
      return body.ok ? (body.value as { idempotency_key?: unknown }).idempotency_key : undefined;
    });
    const missing = keys.findIndex((k) => typeof k !== 'string' || k === '');
    if (missing !== -1) {
      out.push(
        v.fail(
          'missing_idempotency_key',
          'every delivery carries an idempotency_key',
          `delivery ${missing + 1} of ${matched.length} carries no idempotency_key`,
          {
            json_pointer: '/idempotency_key',
            expected: 'a non-empty idempotency_key on every delivery',
            observed: keys,
          },
        ),
      );
      return out;
    }
    const strings = keys as string[];
    const badFormat = strings.findIndex((k) => !IDEMPOTENCY_KEY_PATTERN.test(k));
    if (badFormat !== -1) {
      const code = IDEMPOTENCY_KEY_PATTERN.test(strings[0]!)
        ? 'idempotency_key_format_changed'
        : 'invalid_idempotency_key_format';
      out.push(
        v.fail(
          code,
          'every idempotency_key matches ^[A-Za-z0-9_.:-]{16,255}$',
          `delivery ${badFormat + 1}'s idempotency_key does not match ${IDEMPOTENCY_KEY_PATTERN.source}`,
          { json_pointer: '/idempotency_key', expected: IDEMPOTENCY_KEY_PATTERN.source, observed: strings },
        ),
      );
      return out;
    }
    if (strings.some((k) => k !== strings[0])) {
      out.push(
        v.fail(
          'idempotency_key_rotated',
          'the idempotency_key is byte-identical on every retry',
          `the idempotency_key changed across retries of one event (a retry must reuse the first delivery's key): ${strings.map((k, i) => `#${i + 1} ${k}`).join(', ')}`,
          {
            json_pointer: '/idempotency_key',
            expected: strings.map(() => strings[0]),
            observed: strings,
          },
        ),
      );
      return out;
    }
    out.push(v.pass(`the idempotency_key is byte-identical on all ${strings.length} deliveries`));
    // storyboard-schema.yaml > expect_webhook_retry_keys_stable: under 9421 every retry is verified, with the run's replay store.
    if (!hmac && step.verify_signature_on_every_delivery !== false) {
      let operatorJwks: string | undefined;
      for (const [i, delivery] of matched.entries()) {
        const verdict = await this.signatures.verify(delivery, WEBHOOK_SIGNING.tag, agentUrl);
        if (!verdict.ok) {
          const failed = signatureValidation(v, verdict, delivery, WEBHOOK_SIGNING.tag);
          out.push({ ...failed, error: `delivery ${i + 1} of ${matched.length}: ${failed.error}` });
          return out;
        }
        operatorJwks = verdict.operatorJwks;
      }
      const verified = v.pass(`every delivery's RFC 9421 signature verifies, each with a fresh nonce`);
      out.push(operatorJwks === undefined ? verified : withOperatorKeySource(verified, operatorJwks));
    }
    return out;
  }

  /** Waits on the receiver until `done` says so or the window closes; every delivery at the URL, oldest first. */
  private async collect(
    sink: WebhookSink,
    target: { stepId: string; operationId: string },
    windowMs: number,
    done: (all: WebhookDelivery[]) => boolean,
  ): Promise<WebhookDelivery[]> {
    const deadline = performance.now() + windowMs;
    const all: WebhookDelivery[] = [];
    let after = 0;
    for (;;) {
      const remaining = deadline - performance.now();
      const batch = await sink.next(target.stepId, target.operationId, after, Math.max(0, remaining));
      for (const d of batch) {
        all.push(d);
        after = Math.max(after, d.seq);
      }
      if (done(all) || deadline - performance.now() <= 0 || (batch.length === 0 && remaining <= 0)) return all;
    }
  }

  /** The URL a step watches: its trigger's, with the filter's operation_id when it names one. */
  private target(step: Step, filterOperation: unknown): { stepId: string; operationId: string } | { problem: string } {
    const triggeredBy = typeof step.triggered_by === 'string' ? step.triggered_by : undefined;
    if (filterOperation !== undefined && typeof filterOperation !== 'string')
      return { problem: `filter.operation_id must be a string, got ${JSON.stringify(filterOperation)}` };
    if (triggeredBy) {
      const operationId = filterOperation ?? this.operationIds.get(triggeredBy);
      if (!operationId)
        return {
          problem: `the trigger "${triggeredBy}" registered no receiver URL: its request names no {{runner.webhook_url:${triggeredBy}}}`,
        };
      return { stepId: triggeredBy, operationId };
    }
    if (filterOperation) {
      const stepId = [...this.operationIds].find(([, op]) => op === filterOperation)?.[0];
      if (stepId) return { stepId, operationId: filterOperation };
      return { problem: `no receiver URL of this run carries operation_id "${filterOperation}"` };
    }
    return { problem: 'the step names neither triggered_by nor filter.operation_id, so no receiver URL is in scope' };
  }

  private operationIdFor(stepId: string): string {
    let id = this.operationIds.get(stepId);
    if (!id) this.operationIds.set(stepId, (id = randomUUID()));
    return id;
  }

  private retryPolicyFor(stepId: string): RetryPolicy | undefined {
    const retryStep = this.storyboard.phases
      .flatMap((p) => p.steps)
      .find((s) => s.task === 'expect_webhook_retry_keys_stable' && s.triggered_by === stepId);
    if (!retryStep) return undefined;
    const trigger = (retryStep.retry_trigger ?? {}) as { count?: unknown; http_status?: unknown };
    const count =
      typeof trigger.count === 'number' && Number.isInteger(trigger.count)
        ? Math.min(10, Math.max(1, trigger.count))
        : DEFAULT_RETRY.count;
    const status =
      typeof trigger.http_status === 'number' && RETRY_STATUSES.has(trigger.http_status)
        ? trigger.http_status
        : DEFAULT_RETRY.httpStatus;
    return { count, httpStatus: status };
  }

  private pushConfigOf(trigger: StepResult | undefined): { authentication?: unknown } | undefined {
    const payload = trigger?.request?.payload as { push_notification_config?: unknown } | undefined;
    const config = payload?.push_notification_config;
    return config && typeof config === 'object' ? (config as { authentication?: unknown }) : undefined;
  }
}
