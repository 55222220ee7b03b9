/**
 * What depends on the runner-output contract a run follows, as data the engine and the report read — never an `if`
 * on a version in their code. The contract comes with the corpus (`universal/runner-output-contract.yaml`,
 * `version:`): 1.1.0 in the 3.0 corpus, 2.6.0 in 3.1.x. A run without a corpus (a user's own storyboards only)
 * follows the newest.
 */
import type { SkipReason } from './records.js';

export type ContractVersion = '1.1.0' | '2.6.0';

export interface ContractRules {
  readonly contract: ContractVersion;
  /**
   * The reason a storyboard-level `requires` / `required_any_of_tools` gate reports. 2.6.0 defines
   * `requirement_unmet`; 1.1.0 has no such reason, so a 3.0 run reports the same gate as `not_applicable`.
   */
  readonly requirementUnmet: SkipReason;
  /** cascade_rules.branch_set_cascade_exemption (2.6.0): `any_of` branch-set peers never cascade onto each other. */
  readonly branchSetCascadeExemption: boolean;
  /**
   * storyboard-schema.yaml 3.1 > requires > webhook_receiver: a storyboard whose requests name the runner's webhook
   * receiver (`{{runner.webhook_url:…}}`, `{{runner.webhook_base}}`) requires one, and without it is skipped as a
   * whole, `requirement_unmet`. 1.1.0 has no such reason: a 3.0 run skips the same storyboard as a whole too, as
   * `not_applicable` (`unresolved_substitution`, the preflight of the Unresolved substitution behavior text that 3.0.6
   * and 3.1 share: engine/unresolved.ts `runnerPreflightSkip`).
   */
  readonly inferWebhookReceiverRequirement: boolean;
  /**
   * The 3.1 corpus reads ids no step captures (`$context.media_buy_id` after create_media_buy …): a passing step of
   * such a task provides them, for names the storyboard reads and never declares (engine/conventional-captures.ts).
   */
  readonly conventionalCaptures: boolean;
  /**
   * deterministic-testing.yaml > prerequisites: "Phases that require specific scenarios are skipped if the controller
   * does not support them" — a phase driving a force_/simulate_ scenario the agent's list_scenarios does not list is
   * skipped before any call (engine/applicability.ts phaseScenarioUnmet). The 3.1 corpus is built around it (its
   * deterministic phases each declare `depends_on: []` and their own gate); a 3.0 run keeps the verdicts it always had:
   * the phase runs and meets the agent's UNKNOWN_SCENARIO step by step.
   */
  readonly phaseScenarioGate: boolean;
}

const RULES: Readonly<Record<ContractVersion, ContractRules>> = {
  '1.1.0': {
    contract: '1.1.0',
    requirementUnmet: 'not_applicable',
    branchSetCascadeExemption: false,
    inferWebhookReceiverRequirement: false,
    conventionalCaptures: false,
    phaseScenarioGate: false,
  },
  '2.6.0': {
    contract: '2.6.0',
    requirementUnmet: 'requirement_unmet',
    branchSetCascadeExemption: true,
    inferWebhookReceiverRequirement: true,
    conventionalCaptures: true,
    phaseScenarioGate: true,
  },
};

/** The newest contract this package writes. */
const NEWEST_CONTRACT: ContractVersion = '2.6.0';

/**
 * The rules of a contract version as a corpus states it (`1.1.0`, `2.6.0`, a later 2.x): its major picks the rules —
 * 1.x the 3.0 line's, 2.x and anything newer the newest. Undefined: the newest.
 */
export function contractRules(version: string | undefined): ContractRules {
  const major = version === undefined ? undefined : Number(/^(\d+)\./.exec(version)?.[1]);
  return major === 1 ? RULES['1.1.0'] : RULES[NEWEST_CONTRACT];
}

/**
 * The contract a report of a corpus version follows: 2.6.0 from AdCP 3.1 on (its `major.minor` at least 3.1, a 3.2
 * tree included — the newest this package writes), 1.1.0 for the 3.0 line. No version known (no corpus, or one whose
 * `index.json` names none): the newest, as the engine's `contractRules(undefined)`.
 */
export function contractForCorpus(corpusVersion: string | null | undefined): ContractVersion {
  const match = corpusVersion ? /^(\d+)\.(\d+)/.exec(corpusVersion) : null;
  if (!match) return NEWEST_CONTRACT;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major < 3 || (major === 3 && minor < 1) ? '1.1.0' : '2.6.0';
}

/** The newest of some contract versions; none: the newest this package writes. */
export function newestContract(versions: Iterable<ContractVersion>): ContractVersion {
  let newest: ContractVersion | undefined;
  for (const v of versions)
    if (newest === undefined || CONTRACT_ORDER.indexOf(v) > CONTRACT_ORDER.indexOf(newest)) newest = v;
  return newest ?? NEWEST_CONTRACT;
}

const CONTRACT_ORDER: readonly ContractVersion[] = ['1.1.0', '2.6.0'];
