/**
 * Placeholder substitution in `sample_request` (storyboard-schema.yaml >
 * "Context accumulator and substitution"):
 *   `$context.<name>`              a captured (or storyboard-root) context value
 *   `{{prior_step.<id>.<field>}}`  a field of a prior step's response
 *   `$test_kit.<path>`             a value from the storyboard's test kit
 *   `$generate:uuid_v4[#alias]`    a fresh UUID v4 per run; every use of the same
 *                                  alias in one run gets the same value (so a
 *                                  replay step can reuse a key on purpose), and
 *                                  each alias-less use gets its own
 * A string that is exactly one placeholder is replaced by the typed value
 * (numbers and objects are not stringified); a placeholder inside a longer
 * string is interpolated as text. Anything that does not resolve is reported,
 * never shipped: the agent must not see a literal `$context.x` or `{{...}}`.
 */
import { randomUUID } from 'node:crypto';
import { resolvePath, setOwn } from '../model/path.js';

export interface SubstitutionScope {
  context: ReadonlyMap<string, unknown>;
  /** Response data of prior steps that passed, by step id. */
  priorSteps: ReadonlyMap<string, unknown>;
  testKit?: unknown;
  /**
   * Run-scoped `$generate:` values by alias. Absent: `$generate:` tokens do not
   * resolve (e.g. in a validation, where a fresh value could never match).
   */
  generated?: Map<string, string>;
  /** `{{runner.*}}` values when the run hosts a webhook receiver (roles/webhook-receiver/webhooks.ts). */
  runner?: RunnerVariables;
}

/** test-kits/webhook-receiver-runner.yaml > receiver_urls. */
export interface RunnerVariables {
  /** `{{runner.webhook_base}}` */
  webhookBase: string;
  /** `{{runner.webhook_url:<step_id>}}`: that step's URL (minted once per run), or undefined for an id no URL can carry. */
  webhookUrl(stepId: string): string | undefined;
  /** The operation id minted into that step's URL, if one was. */
  operationId(stepId: string): string | undefined;
}

export interface SubstitutionResult<T> {
  value: T;
  /** The placeholders that did not resolve, as written. */
  unresolved: string[];
}

const CONTEXT = /\$context\.([A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*)/g;
const TEST_KIT = /\$test_kit\.([A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*)/g;
const MUSTACHE = /\{\{\s*([^{}]+?)\s*\}\}/g;
const GENERATE = /\$generate:([a-z0-9_]+)(?:#([\w.<>-]+))?/g;

/** Generators of `$generate:<kind>` (storyboard corpus: `uuid_v4`, see universal/idempotency.yaml). */
const GENERATORS: Record<string, () => string> = { uuid_v4: randomUUID };

function lookupGenerate(
  kind: string,
  alias: string | undefined,
  scope: SubstitutionScope,
): { found: boolean; value?: unknown } {
  const generate = GENERATORS[kind];
  if (!generate || !scope.generated) return { found: false };
  if (alias === undefined) return { found: true, value: generate() };
  const key = `${kind}#${alias}`;
  let value = scope.generated.get(key);
  if (value === undefined) scope.generated.set(key, (value = generate()));
  return { found: true, value };
}

function lookupContext(expression: string, scope: SubstitutionScope): { found: boolean; value?: unknown } {
  // The name ends at the first `.` or `[`: `$context.list[0].id` indexes the captured `list`.
  const [, name, rest] = /([^.[]*)(.*)/s.exec(expression)!;
  if (!scope.context.has(name!)) return { found: false };
  const resolved = resolvePath(scope.context.get(name!), rest!.startsWith('.') ? rest!.slice(1) : rest!);
  return resolved.found ? { found: true, value: resolved.value } : { found: false };
}

function lookupTestKit(path: string, scope: SubstitutionScope): { found: boolean; value?: unknown } {
  if (scope.testKit === undefined) return { found: false };
  const resolved = resolvePath(scope.testKit, path);
  return resolved.found && resolved.value !== null ? { found: true, value: resolved.value } : { found: false };
}

function lookupMustache(expression: string, scope: SubstitutionScope): { found: boolean; value?: unknown } {
  const prior = /^prior_step\.([\w-]+)\.(.+)$/.exec(expression);
  if (prior) {
    // The runner minted this step's operation_id into its webhook URL: that is the id the webhook carries.
    const minted = prior[2] === 'operation_id' ? scope.runner?.operationId(prior[1]!) : undefined;
    if (minted !== undefined) return { found: true, value: minted };
    if (!scope.priorSteps.has(prior[1]!)) return { found: false };
    const resolved = resolvePath(scope.priorSteps.get(prior[1]!), prior[2]!);
    return resolved.found ? { found: true, value: resolved.value } : { found: false };
  }
  const context = /^context\.(.+)$/.exec(expression);
  if (context) return lookupContext(context[1]!, scope);
  // `{{runner.*}}`: only when the run hosts a webhook receiver; anything unknown never resolves.
  if (expression === 'runner.webhook_base' && scope.runner) return { found: true, value: scope.runner.webhookBase };
  const webhookUrl = /^runner\.webhook_url:(.+)$/.exec(expression);
  const url = webhookUrl ? scope.runner?.webhookUrl(webhookUrl[1]!) : undefined;
  return url !== undefined ? { found: true, value: url } : { found: false };
}

/** The `{{runner.*}}` variables a run that hosts a webhook receiver provides (lookupMustache). */
const RUNNER_VARIABLE = /^runner\.(?:webhook_base|webhook_url:.+)$/;

/** A `{{runner.*}}` placeholder as written, and whether it names a variable a run with a webhook receiver provides. */
export interface RunnerToken {
  token: string;
  provided: boolean;
}

/** The distinct `{{runner.*}}` placeholders in a value (a request), at any depth. */
export function runnerTokens(value: unknown): RunnerToken[] {
  const found = new Map<string, RunnerToken>();
  const scan = (v: unknown, depth: number) => {
    if (typeof v === 'string') {
      for (const [token, expression] of v.matchAll(MUSTACHE))
        if (expression!.startsWith('runner.')) found.set(token, { token, provided: RUNNER_VARIABLE.test(expression!) });
    } else if (depth <= 64 && v !== null && typeof v === 'object') {
      for (const inner of Object.values(v)) scan(inner, depth + 1);
    }
  };
  scan(value, 0);
  return [...found.values()];
}

function substituteString(input: string, scope: SubstitutionScope, unresolved: string[]): unknown {
  const whole = [
    { re: /^\$context\.([A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*)$/, lookup: lookupContext },
    { re: /^\$test_kit\.([A-Za-z_][\w-]*(?:\.[\w-]+|\[\d+\])*)$/, lookup: lookupTestKit },
    { re: /^\{\{\s*([^{}]+?)\s*\}\}$/, lookup: lookupMustache },
  ];
  for (const { re, lookup } of whole) {
    const match = re.exec(input);
    if (match) {
      const found = lookup(match[1]!, scope);
      if (found.found) return found.value;
      unresolved.push(input);
      return input;
    }
  }
  const interpolate = (re: RegExp, lookup: typeof lookupContext) => (text: string) =>
    text.replace(re, (token, expression: string) => {
      const found = lookup(expression, scope);
      if (!found.found) {
        unresolved.push(token);
        return token;
      }
      return typeof found.value === 'string' ? found.value : JSON.stringify(found.value);
    });
  const generateInText = (text: string) =>
    text.replace(GENERATE, (token, kind: string, alias: string | undefined) => {
      const found = lookupGenerate(kind, alias, scope);
      if (!found.found) {
        unresolved.push(token);
        return token;
      }
      return String(found.value);
    });
  return [
    generateInText,
    interpolate(MUSTACHE, lookupMustache),
    interpolate(CONTEXT, lookupContext),
    interpolate(TEST_KIT, lookupTestKit),
  ].reduce((text, apply) => apply(text), input);
}

function walk(value: unknown, scope: SubstitutionScope, unresolved: string[]): unknown {
  if (typeof value === 'string') return substituteString(value, scope, unresolved);
  if (Array.isArray(value)) return value.map((item) => walk(item, scope, unresolved));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    // setOwn: a storyboard's `__proto__` key is data to send, not this copy's prototype.
    for (const [key, inner] of Object.entries(value)) setOwn(out, key, walk(inner, scope, unresolved));
    return out;
  }
  return value;
}

/** Substitutes every placeholder in a (deep-copied) value. */
export function substitute<T>(value: T, scope: SubstitutionScope): SubstitutionResult<T> {
  const unresolved: string[] = [];
  const result = walk(value, scope, unresolved) as T;
  return { value: result, unresolved: [...new Set(unresolved)] };
}

/**
 * Resolves a step's `task` when it references the test kit
 * (`$test_kit.auth.probe_task`), falling back to `task_default`.
 */
export function resolveTask(task: string, taskDefault: string | undefined, testKit: unknown): string | undefined {
  const match = /^\$test_kit\.(.+)$/.exec(task);
  if (!match) return task;
  const found = lookupTestKit(match[1]!, { context: new Map(), priorSteps: new Map(), testKit });
  if (found.found && typeof found.value === 'string') return found.value;
  return taskDefault;
}
