/**
 * Whether a step runs at all: the skip rules of storyboard-schema.yaml and
 * runner-output-contract.yaml > skip_result that depend on the agent and on
 * earlier steps.
 *
 * - `missing_tool`: the agent does not advertise the step's task (or the
 *   storyboard's `required_tools`, none of which it has); detail cites the
 *   tool and the agent's tool list.
 * - `missing_test_controller`: the step (`requires_tool`) or the seeding
 *   phase needs `comply_test_controller`, which the agent does not advertise.
 * - `prerequisite_failed` — the stateful cascade (runner-output-contract.yaml >
 *   cascade_rules): once a stateful step fails, its phase "trips", and the later
 *   stateful steps of that phase and of every phase that depends on it would run
 *   on state that never materialised, so they skip, citing the step — and trip
 *   their own phase in turn. A phase depends on every earlier phase unless it
 *   says otherwise (`depends_on`: the named earlier phases, or `[]` for none);
 *   under `any_of` semantics a branch-set peer never depends on another peer
 *   of its set (cascade_rules.branch_set_cascade_exemption, contract 2.6.0). A stateful
 *   step skipped `missing_tool` / `missing_test_controller` trips the cascade
 *   too, unless it is its phase's only stateful step (nothing in the phase
 *   depends on it) or a same-phase peer that `provides_state_for` it passes —
 *   then it is re-graded `peer_substituted` and nothing cascades.
 * - A stateful step skipped `not_applicable` trips the cascade at the end of
 *   its phase when no stateful step of the phase passed and others depend on it.
 */
import type { Phase, Step, Storyboard } from '../model/storyboard.js';
import type { SkipResult, StepResult } from '../model/records.js';

export type AgentTools = { tools: ReadonlySet<string>; error?: undefined } | { tools?: undefined; error: string };

/**
 * The skip of a runner-only task no role of this run grades (the webhook tasks are the webhook-receiver role's:
 * roles/webhook-receiver/).
 */
export function runnerOnlyTaskSkip(step: Step, task: string): SkipResult | undefined {
  if (task === 'replay_webhook_vector') {
    // universal/webhook-receiver-envelope.yaml: the runner POSTs the vectors to a buyer's webhook receiver, and "the
    // storyboard grades not_applicable when the runner was not configured with a buyer receiver URL".
    return {
      reason: 'not_applicable',
      detail:
        'replay_webhook_vector tests a buyer or orchestrator webhook receiver (the runner POSTs webhook vectors to it); this run names no buyer receiver URL — vitest-adcp grades the agent under test, not a receiver',
    };
  }
  if (task === 'expect_substitution_safe') {
    const contract = typeof step.requires_contract === 'string' ? step.requires_contract : undefined;
    // storyboard-schema.yaml > Composition: a named contract not in scope grades not_applicable.
    return {
      reason: 'not_applicable',
      detail: `${task} requires the test-kit contract "${contract ?? 'substitution_observer_runner'}", which is not in scope for this run`,
    };
  }
  return undefined;
}

/**
 * `requires_scenarios` that name no storyboard of the compliance tree (`known`; absent: not checked):
 * storyboard-schema.yaml > unresolved_scenario_reference, the canonical not_applicable, one sentence per id.
 */
export function unresolvedScenarioSkip(
  storyboard: Pick<Storyboard, 'requires_scenarios'>,
  known: ReadonlySet<string> | undefined,
): SkipResult | undefined {
  if (!known) return undefined;
  const missing = (storyboard.requires_scenarios ?? []).filter((id) => !known.has(id));
  if (missing.length === 0) return undefined;
  return {
    reason: 'not_applicable',
    detail: missing
      .map((id) => `requires_scenarios reference "${id}" did not resolve against the source tree`)
      .join('\n'),
  };
}

const CONTROLLER = 'comply_test_controller';
const HARD_MISSING = new Set(['missing_tool', 'missing_test_controller']);

interface Trigger {
  phase: string;
  step: string;
  /** The trigger's skip reason, when a skip (not a failure) tripped the cascade. */
  reason?: string;
}

export interface CascadeRules {
  /** cascade_rules.branch_set_cascade_exemption (contract 2.6.0): `any_of` peers do not cascade onto each other. */
  branchSetExemption: boolean;
}

export class CascadeState {
  /** Per phase: the step that tripped its stateful cascade (a failure overrides a skip as the cited cause). */
  private readonly trips = new Map<Phase, Trigger>();
  /** Per phase: the phases whose trips cascade onto it. */
  private readonly dependencies = new Map<Phase, readonly Phase[]>();
  /** Per phase: missing peers waiting for a substitute's verdict, and a pending not_applicable. */
  private readonly deferred = new Map<Phase, { target: number; trigger: Trigger }[]>();
  private readonly pendingNotApplicable = new Map<Phase, Trigger>();

  constructor(
    private readonly entries: readonly { phase: Phase; step: Step }[],
    /** The storyboard's `required_tools`. */
    private readonly requiredTools: readonly string[] = [],
    rules: CascadeRules = { branchSetExemption: true },
  ) {
    const phases = [...new Set(entries.map((e) => e.phase))];
    phases.forEach((phase, i) => {
      const prior = phases.slice(0, i);
      const named = phase.depends_on;
      let on = named === undefined ? prior : prior.filter((p) => named.includes(p.id));
      const set = phase.branch_set;
      if (rules.branchSetExemption && set?.semantics === 'any_of')
        on = on.filter((p) => !(p.branch_set?.semantics === 'any_of' && p.branch_set.id === set.id));
      this.dependencies.set(phase, on);
    });
  }

  /** What tripped the cascade this phase's stateful steps see: its own trip, else its dependencies', first first. */
  private trippedFor(phase: Phase): Trigger | undefined {
    return (
      this.trips.get(phase) ??
      this.dependencies
        .get(phase)
        ?.map((p) => this.trips.get(p))
        .find(Boolean)
    );
  }

  private trip(phase: Phase, trigger: Trigger, override = false): void {
    if (override || !this.trips.has(phase)) this.trips.set(phase, trigger);
  }

  /** The skip for a step about to run, or undefined when it runs. `passed: false` marks a cascade skip (the step's state is lost). */
  gate(index: number, task: string, agent: AgentTools): { skip: SkipResult; passed?: false } | undefined {
    const { step } = this.entries[index]!;
    const tools = agent.tools;
    const listed = (name: string) => !tools || tools.has(name);
    const toolList = tools ? `[${[...tools].sort().join(', ')}]` : '';
    const required = this.storyboardGate(agent);
    if (required) return { skip: required };
    const tripped = step.stateful === true ? this.trippedFor(this.entries[index]!.phase) : undefined;
    if (tripped) {
      if (!listed(task)) return { skip: missingTool(task, toolList) };
      const t = tripped;
      return {
        skip: {
          reason: 'prerequisite_failed',
          detail: `prerequisite step "${t.step}" (phase ${t.phase}) ${t.reason ? `was skipped (${t.reason})` : 'failed'}, so the state this stateful step needs never materialised`,
        },
        passed: false,
      };
    }
    const requiresTool = typeof step.requires_tool === 'string' ? step.requires_tool : undefined;
    if (requiresTool && !listed(requiresTool)) {
      if (requiresTool === CONTROLLER) {
        return {
          skip: {
            reason: 'missing_test_controller',
            detail: `this step needs ${CONTROLLER} (deterministic testing), which the agent does not advertise; agent tools: ${toolList}`,
          },
        };
      }
      return { skip: missingTool(requiresTool, toolList) };
    }
    if (!listed(task)) return { skip: missingTool(task, toolList) };
    return undefined;
  }

  /** After each step: a stateful failure or hard-missing skip may trip the cascade. */
  record(index: number, result: StepResult): void {
    const { phase, step } = this.entries[index]!;
    if (step.stateful !== true) return;
    const here = { phase: phase.id, step: step.id };
    if (!result.skip && !result.passed) {
      this.trip(phase, here, true); // a failure overrides a skip as the cited cause
      return;
    }
    const reason = result.skip?.reason;
    if (!reason) return; // passed
    if (result.passed === false) {
      // Itself a cascade skip: its phase trips in turn (contract > default_cascade: prerequisite_failed cascades),
      // citing the step that started it.
      const upstream = this.trippedFor(phase);
      if (upstream) this.trip(phase, upstream);
      return;
    }
    if (HARD_MISSING.has(reason)) {
      if (this.substitutesOf(phase, step).length > 0) {
        const list = this.deferred.get(phase) ?? [];
        list.push({ target: index, trigger: { ...here, reason } });
        this.deferred.set(phase, list);
        return;
      }
      if (this.statefulCount(phase) > 1) this.trip(phase, { ...here, reason });
      else result.skip!.detail += ` (the only stateful step of phase ${phase.id}: nothing downstream is cascaded)`;
      return;
    }
    if (reason === 'not_applicable' && !this.pendingNotApplicable.has(phase))
      this.pendingNotApplicable.set(phase, { ...here, reason });
  }

  /** At the end of a phase: substitutes rescue their peers (peer_substituted) or the deferred cascade trips. */
  endPhase(phase: Phase, results: ReadonlyMap<number, StepResult>): void {
    const indexes = this.entries.map((e, i) => (e.phase === phase ? i : -1)).filter((i) => i >= 0);
    for (const { target, trigger } of this.deferred.get(phase) ?? []) {
      const targetStep = this.entries[target]!.step;
      const substitute = indexes.find((i) => {
        const s = this.entries[i]!.step;
        const r = results.get(i);
        return s.stateful === true && s.provides_state_for?.includes(targetStep.id) && r?.passed === true && !r.skip;
      });
      const result = results.get(target)!;
      if (substitute !== undefined) {
        // runner-output-contract.yaml > peer_substituted: "<this_step_id> state provided by <peer_phase_id>.<peer_step_id>".
        result.skip = {
          reason: 'peer_substituted',
          detail: `${targetStep.id} state provided by ${phase.id}.${this.entries[substitute]!.step.id}`,
        };
      } else {
        this.trip(phase, trigger);
        result.skip!.detail += ` (declared substitute ${this.substitutesOf(phase, targetStep).join(', ')} did not pass)`;
      }
    }
    const pending = this.pendingNotApplicable.get(phase);
    const anyPassed = indexes.some(
      (i) => this.entries[i]!.step.stateful === true && results.get(i)?.passed === true && !results.get(i)?.skip,
    );
    if (pending && !anyPassed && this.statefulCount(phase) > 1) this.trip(phase, pending);
  }

  private substitutesOf(phase: Phase, step: Step): string[] {
    return phase.steps.filter((s) => s.provides_state_for?.includes(step.id)).map((s) => s.id);
  }

  private statefulCount(phase: Phase): number {
    return phase.steps.filter((s) => s.stateful === true).length;
  }

  /** storyboard `required_tools`: when the agent has none of them, nothing in the storyboard applies to it. */
  storyboardGate(agent: AgentTools): SkipResult | undefined {
    const tools = agent.tools;
    const required = this.requiredTools;
    if (!tools || required.length === 0 || required.some((t) => tools.has(t))) return undefined;
    return {
      reason: 'missing_tool',
      detail: `the storyboard's required_tools [${required.join(', ')}]: the agent advertises none of them; agent tools: [${[...tools].sort().join(', ')}]`,
    };
  }
}

function missingTool(tool: string, toolList: string): SkipResult {
  // runner-output-contract.yaml > missing_tool: cite the tool and the agent's advertised list.
  return {
    reason: 'missing_tool',
    detail: `the agent does not advertise the tool "${tool}"; agent tools: ${toolList}`,
  };
}
