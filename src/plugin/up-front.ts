/**
 * The corpus storyboards a run grades `not_applicable` before it starts: those whose storyboard-level
 * `requires_capability` gate the agent's get_adcp_capabilities answer does not satisfy, when the run selected its
 * storyboards from that answer (capability selection: the bin's default, `compliance.fromCapabilities`).
 *
 * The text decides what such a storyboard is: storyboard-schema.yaml > `requires_capability` is a "storyboard-level
 * applicability gate evaluated against the agent's `get_adcp_capabilities` response before executing phases. When the
 * predicate is not satisfied, the runner skips the storyboard with skip_result.reason: not_applicable and detail naming
 * the predicate path and declared value". So it is not a test file of the run: the report lists it, skipped as a whole
 * with that skip_result (the contract reporter reads the list the plugin provides: vitest/reporter.ts), the terminal
 * summary counts it, and the bin's `--list` says so. The reference runner grades the same storyboards up front too.
 *
 * Decided from the file's header (storyboard/select.ts `storyboardGate`: the gate's block, parsed) and the same
 * predicate code the engine runs (engine/applicability.ts `capabilityUnmet`, with the capabilities schema's defaults),
 * so the detail is the one the engine would give each step. A gate that cannot be read there (written twice, not a
 * predicate this format defines) is left to the run, which skips the storyboard's steps one by one if it does not hold.
 * Every corpus storyboard of such a run is graded so, those named beside the selection too. A run that asked the agent
 * nothing (storyboards named, your own files) runs each as a test file, and the engine decides its gate, skipping its
 * steps one by one (docs/conformance.md, "Storyboards not applicable up front").
 */
import type { NotApplicableStoryboard } from '../model/step-meta.js';
import { scrubSecrets } from '../model/redact.js';
import type { CapabilityPredicate } from '../model/storyboard.js';
import { storyboardGate, storyboardKeys } from '../storyboard/select.js';
import { agentSecrets, type AgentAccess } from './agent-preflight.js';
import { capabilitiesAnswered } from './capabilities.js';

const MATCHERS = ['equals', 'contains', 'present'] as const;

/**
 * A storyboard-level `requires_capability` as storyboard.schema.json defines it (a non-empty `path`, exactly one of
 * `equals`, `contains`, `present`; `x-` and `$` annotations): else undefined, left to the run.
 */
function predicateOf(value: unknown): CapabilityPredicate | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.path !== 'string' || record.path === '') return undefined;
  const keys = Object.keys(record).filter((key) => !/^(x-|\$)/.test(key));
  if (keys.some((key) => key !== 'path' && !(MATCHERS as readonly string[]).includes(key))) return undefined;
  if (MATCHERS.filter((m) => Object.hasOwn(record, m)).length !== 1) return undefined;
  // A `present` that is not a boolean matches nothing in capabilityUnmet: the gate holds, and the run's load says why.
  return record as unknown as CapabilityPredicate;
}

/**
 * The storyboards of `files` whose storyboard-level `requires_capability` the agent's get_adcp_capabilities answer
 * (`answer`, its data) does not satisfy, each with the skip the engine would give its steps; in the order of `files`.
 * None when that is every one of them: a run of no files is Vitest's "No test files found", so they run, their steps
 * skipped one by one. `schemasDir`: the AdCP schemas the run validates with, whose capabilities response schema says
 * what a field the agent left out means (none: no defaults, as for a run without schemas). `secrets`: the run's (its
 * token, credentials in the agent URL), scrubbed from the detail, which quotes what the agent declared.
 */
export async function notApplicableUpFront(
  files: readonly string[],
  answer: Record<string, unknown>,
  { schemasDir, secrets }: { schemasDir: string | undefined; secrets: readonly string[] },
): Promise<NotApplicableStoryboard[]> {
  const gated = files.flatMap((file) => {
    const gate = storyboardGate(file);
    const predicate = predicateOf(gate.requires_capability);
    const keys = predicate ? storyboardKeys(file) : undefined;
    return predicate && typeof keys?.id === 'string' ? [{ file, keys: { ...keys, ...gate }, predicate }] : [];
  });
  if (gated.length === 0) return [];
  const [{ capabilityUnmet, CAPABILITIES_RESPONSE }, { schemaRegistryFor }] = await Promise.all([
    import('../engine/applicability.js'),
    import('../schemas/registry.js'),
  ]);
  // Made when a default is first asked for: a registry lists its schema directory (some 580 files) as it is made.
  const defaults = (path: string) =>
    schemasDir ? schemaRegistryFor(schemasDir).defaultAt(CAPABILITIES_RESPONSE, path) : undefined;
  const graded = gated.flatMap(({ file, keys, predicate }): NotApplicableStoryboard[] => {
    const detail = capabilityUnmet(predicate, { data: answer }, defaults);
    if (detail === undefined) return [];
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    const id = keys.id as string;
    const version = text(keys.version);
    const track = text(keys.track);
    return [
      {
        storyboard: {
          id,
          title: text(keys.title) ?? id,
          ...(version ? { version } : {}),
          ...(track ? { track } : {}),
          file,
        },
        skip: { reason: 'not_applicable', detail: scrubSecrets(detail, secrets) },
      },
    ];
  });
  return graded.length < files.length ? graded : [];
}

/**
 * `notApplicableUpFront` for the run's agent, against the answer capability selection read for it in this process
 * (capabilities.ts `capabilitiesAnswered`), the agent's secrets scrubbed: the bin's `--list` and first line, and the
 * plugin's include. None when no answer was read (storyboards named, not selected from the agent).
 */
export async function gradedUpFront(
  agent: AgentAccess,
  files: readonly string[],
  schemasDir: string | undefined,
): Promise<NotApplicableStoryboard[]> {
  const answer = capabilitiesAnswered(agent);
  if (!answer) return [];
  return notApplicableUpFront(files, answer, { schemasDir, secrets: agentSecrets(agent) });
}
