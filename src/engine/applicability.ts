/**
 * Whether a storyboard (or a phase) applies to this agent and this run at all: the storyboard-level gates of
 * storyboard-schema.yaml 3.1, evaluated before any of its steps reaches the agent, in the order the spec gives them:
 *
 *   1. `requires_capability` — the agent's get_adcp_capabilities answer satisfies the predicate, else the storyboard
 *      is `not_applicable`, naming the path and the declared value ("Capability applicability is first: an optional
 *      capability storyboard grades not_applicable for an agent that did not opt in, whatever the run lacks");
 *   2. `requires` (and, per the contract's rules, `webhook_receiver` inferred from the requests) — each value the run
 *      must meet, else `requirement_unmet` naming it; an unknown value is unmet (forward compatibility);
 *   3. `required_any_of_tools` — each family needs one advertised tool, else `requirement_unmet` with
 *      `missing_required_tool_family: needs <a> or <b> (<rationale>)`;
 *   4. `required_tools` (3.0) — the agent has none of them: `missing_tool` (gate.ts).
 *
 * A phase's `requires_capability` skips that phase's steps `not_applicable`; such a phase does not trip the stateful
 * cascade (conformance.md, "Phases a capability gate skips").
 */
import { CONTROLLER_TASK, controllerScenario } from '../model/answer-error.js';
import type { ContractRules } from '../model/contract-rules.js';
import type { SkipResult } from '../model/records.js';
import type { CapabilityPredicate, Phase, Step, Storyboard } from '../model/storyboard.js';
import { jsonEqual } from '../checks/equality.js';
import type { AgentTools } from './gate.js';
import { runnerTokens } from './substitute.js';
import { requestsOf } from './unresolved.js';

/** The agent's get_adcp_capabilities answer, or why there is none. */
export type AgentCapabilities = { data: unknown; error?: undefined } | { data?: undefined; error: string };

/** What the run offers, for `requires`. */
export interface RunFacts {
  /** The run hosts a webhook receiver (`webhooks` option, or its proxy mode). */
  webhookReceiver: boolean;
  /** The operator declared state seeded out of band (`seededState`, CLI `--seeded-state`). */
  seededState: boolean;
}

/** Where the capabilities schema's defaults are read (`requires_capability` value matchers: SchemaDefault). */
export const CAPABILITIES_RESPONSE = 'protocol/get-adcp-capabilities-response.json';

/** The default value the capabilities schema declares at a dotted path, if any (schemas/registry.ts `defaultAt`). */
export type SchemaDefault = (path: string) => unknown;

const KNOWN_REQUIREMENTS = new Set(['controller', 'seeded_state', 'real_wire', 'webhook_receiver', 'multi_agent']);

/**
 * Whether any step's request names the runner's webhook receiver (`{{runner.webhook_url:<key>}}`,
 * `{{runner.webhook_base}}`): the inferred `requires: [webhook_receiver]`.
 */
function namesWebhookReceiver(steps: readonly Step[]): boolean {
  return steps.some((step) => runnerTokens(requestsOf(step)).some((t) => t.provided));
}

/** The requirements a storyboard declares, and those the contract's rules infer from its requests. */
export function storyboardRequirements(storyboard: Storyboard, rules: ContractRules): string[] {
  const declared = (storyboard.requires ?? []).filter((r): r is string => typeof r === 'string');
  const inferred =
    rules.inferWebhookReceiverRequirement &&
    !declared.includes('webhook_receiver') &&
    namesWebhookReceiver(storyboard.phases.flatMap((p) => p.steps))
      ? ['webhook_receiver']
      : [];
  return [...declared, ...inferred];
}

/**
 * The first unmet `requires` value with its detail (storyboard-schema.yaml 3.1 > requires; the detail "names" the
 * value: it starts with it, the contract's bare legacy form), or undefined.
 */
function unmetRequirement(requirements: readonly string[], tools: AgentTools, facts: RunFacts): string | undefined {
  for (const requirement of requirements) {
    if (!KNOWN_REQUIREMENTS.has(requirement))
      return `${requirement}: a runtime requirement vitest-adcp does not know, so it is unmet (forward compatibility)`;
    switch (requirement) {
      case 'controller':
        if (tools.tools && !tools.tools.has(CONTROLLER_TASK))
          return `controller: the agent does not advertise ${CONTROLLER_TASK}; agent tools: [${[...tools.tools].sort().join(', ')}]`;
        break;
      case 'seeded_state':
        if (!facts.seededState)
          return 'seeded_state: the operator has not declared the prerequisite state seeded out of band (option seededState, CLI --seeded-state)';
        break;
      case 'webhook_receiver':
        if (!facts.webhookReceiver)
          return "webhook_receiver: the storyboard needs the runner's webhook receiver and this run has none (option webhooks, CLI --webhook-receiver); its {{runner.webhook_url:…}} placeholders are never sent unresolved";
        break;
      case 'multi_agent':
        return 'multi_agent: the storyboard needs several logical agents, and vitest-adcp runs against one agent';
      default: // real_wire: always met (reserved for a future mock-only mode)
        break;
    }
  }
  return undefined;
}

/** `required_any_of_tools`: the first family the agent advertises no tool of, in the contract's detail shape. */
function missingToolFamily(storyboard: Storyboard, tools: AgentTools): string | undefined {
  if (!tools.tools) return undefined;
  const family = (storyboard.required_any_of_tools ?? []).find(
    (f) => Array.isArray(f.tools) && !f.tools.some((tool) => tools.tools!.has(tool)),
  );
  if (!family) return undefined;
  // runner-output-contract.yaml > requirement_unmet: tools joined by " or ", the rationale in parentheses.
  return `missing_required_tool_family: needs ${family.tools.join(' or ')}${family.rationale ? ` (${family.rationale})` : ''}`;
}

/**
 * A `requires_capability` predicate against the agent's capabilities: undefined when it holds, else the skip detail
 * naming the path and the declared value. The value at `path` (dotted keys) is the agent's, or — for `equals` and
 * `contains`, when the agent left the field out of an object it did declare — the capabilities schema's `default`:
 * the schema says what an absent field means. `present` reads the wire only: presence is what it tests.
 */
export function capabilityUnmet(
  predicate: CapabilityPredicate,
  capabilities: AgentCapabilities,
  defaults?: SchemaDefault,
): string | undefined {
  const path = String(predicate.path);
  const declared = capabilities.error === undefined ? valueAt(capabilities.data, path) : undefined;
  const why = capabilities.error !== undefined ? ` (get_adcp_capabilities: ${capabilities.error})` : '';
  if (Object.hasOwn(predicate, 'present')) {
    const present = declared !== undefined && declared !== null;
    if (predicate.present === true && !present)
      return `requires_capability: ${path} must be present; the agent does not declare it${why}`;
    if (predicate.present === false && present)
      return `requires_capability: ${path} must be absent; the agent declares ${JSON.stringify(declared)}`;
    return undefined;
  }
  const value =
    declared === undefined && capabilities.error === undefined && parentIsObject(capabilities.data, path)
      ? defaults?.(path)
      : declared;
  const shown = value === undefined ? `declares no value${why}` : `declares ${JSON.stringify(value)}`;
  if (Object.hasOwn(predicate, 'contains')) {
    if (Array.isArray(value) && value.some((v) => jsonEqual(v, predicate.contains))) return undefined;
    return `requires_capability: ${path} must contain ${JSON.stringify(predicate.contains)}; the agent ${shown}`;
  }
  if (Object.hasOwn(predicate, 'equals')) {
    if (value !== undefined && jsonEqual(value, predicate.equals)) return undefined;
    return `requires_capability: ${path} must equal ${JSON.stringify(predicate.equals)}; the agent ${shown}`;
  }
  // No matcher this format defines (a newer format's, say): nothing to hold against the agent.
  return undefined;
}

function valueAt(root: unknown, path: string): unknown {
  let current = root;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object' || Array.isArray(current) || !Object.hasOwn(current, key))
      return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** The object that would hold `path`'s last key exists (a default fills a field left out, not a section left out). */
function parentIsObject(root: unknown, path: string): boolean {
  const keys = path.split('.');
  const parent = keys.length === 1 ? root : valueAt(root, keys.slice(0, -1).join('.'));
  return parent !== null && typeof parent === 'object' && !Array.isArray(parent);
}

/**
 * The controller scenarios a phase drives the agent with: the literal `scenario` of each of its comply_test_controller
 * steps that does not expect an error (a step that expects one may be testing the refusal: deterministic_testing's
 * missing_params accepts UNKNOWN_SCENARIO), other than the discovery and seeding ones.
 */
export function phaseScenarios(phase: Phase): string[] {
  const scenarios = phase.steps
    .filter((s) => s.expect_error !== true)
    .map(controllerScenario)
    .filter((x): x is string => x !== undefined && /^(force|simulate)_/.test(x));
  return [...new Set(scenarios)];
}

/**
 * universal/deterministic-testing.yaml > prerequisites: "The controller is detected via list_scenarios before any state
 * transitions are attempted. Phases that require specific scenarios are skipped if the controller does not support
 * them." The phase's skip detail when the agent's list (when it gave one) lacks a scenario the phase drives.
 */
export function phaseScenarioUnmet(phase: Phase, listed: readonly string[] | { error: string }): string | undefined {
  if (!Array.isArray(listed)) return undefined;
  const missing = phaseScenarios(phase).filter((s) => !listed.includes(s));
  if (missing.length === 0) return undefined;
  return `phase "${phase.id}" drives the ${CONTROLLER_TASK} scenario${missing.length > 1 ? 's' : ''} ${missing.map((s) => `"${s}"`).join(', ')}, which the agent's list_scenarios does not list`;
}

/** The storyboard-level gates, first unmet first (see the file comment). */
export function storyboardGate(
  storyboard: Storyboard,
  tools: AgentTools,
  capabilities: AgentCapabilities | undefined,
  facts: RunFacts,
  rules: ContractRules,
  defaults?: SchemaDefault,
): SkipResult | undefined {
  if (storyboard.requires_capability && capabilities) {
    const detail = capabilityUnmet(storyboard.requires_capability, capabilities, defaults);
    if (detail) return { reason: 'not_applicable', detail };
  }
  const requirement = unmetRequirement(storyboardRequirements(storyboard, rules), tools, facts);
  if (requirement) return { reason: rules.requirementUnmet, detail: requirement };
  const family = missingToolFamily(storyboard, tools);
  if (family) return { reason: rules.requirementUnmet, detail: family };
  return undefined;
}
