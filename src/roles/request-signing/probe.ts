/**
 * Runs and grades the synthesized vector steps of the `signed_requests`
 * storyboard (universal/signed-requests.yaml, test-kits/signed-requests-runner.yaml),
 * one per storyboard run.
 *
 * Gating. The storyboard applies to an agent that advertises
 * `request_signing.supported: true`; "absence of advertisement is not a
 * failure … grading skips to a non-applicable outcome". So the capability
 * step itself is graded `not_applicable` when the agent does not advertise
 * it, and so is every later step (the engine halts the storyboard with it).
 *
 * Each vector: is it applicable to this agent (its URL edge reproducible at an
 * MCP endpoint, its content-digest policy the agent's, its operation one the
 * agent implements — "operations the agent does not implement are skipped,
 * not failed"), then the request (build.ts) sent with undici,
 * then the verdict:
 *   positive  passes on a non-4xx answer (the Grading text; a 5xx passes with a warning);
 *   negative  passes only on 401 with `WWW-Authenticate: Signature error="<code>"`,
 *             the code byte for byte the vector's.
 * Vectors that declare `requires_contract` follow the test kit's black-box
 * behaviour (016 sends the request twice, 020 fills the per-keyid cap first,
 * 017 signs with the pre-revoked keyid); a contract the runner cannot satisfy
 * fails the vector — "grade as FAIL, never as SKIP". The one skip the kit and
 * the output contract allow is the operator's rate-abuse opt-out
 * (`unsatisfied_contract`, detail `rate_abuse_opt_out: …`).
 */
import { answerError } from '../../model/answer-error.js';
import type { Exchange } from '../../model/exchange.js';
import { fieldValue } from '../../signing/message.js';
import type { SigningVector } from '../../signing/vectors.js';
import type { Phase, Step } from '../../model/storyboard.js';
import type { AgentTools } from '../../engine/gate.js';
import { isVectorErrorStep, isVectorStep, synthesizesVectorSteps, VECTOR_PHASES } from '../../plan/signing-vectors.js';
import type { SkipResult, StepResult } from '../../model/records.js';
import { urlEdge, VectorNotReproducible, vectorOperation } from './build.js';
import { VectorGrader } from './grader.js';
import type { AgentSigningCapability, RequestSigningOptions } from './options.js';
import { vectorsIn } from './vectors.js';

type CapabilityState =
  | { kind: 'advertised'; capability: AgentSigningCapability }
  | { kind: 'not_advertised'; skip: SkipResult }
  | { kind: 'unknown'; skip: SkipResult };

/** The storyboard's own list of operations the runner may sign (required_tools comment), after the vector's own. */
const MUTATING_OPERATIONS = ['create_media_buy', 'update_media_buy', 'sync_creatives', 'activate_signal'];

const CAPABILITY_TASK = 'get_adcp_capabilities';

/** A step's verdict as this module decides it: a full record, or a skip. */
export interface CapabilityVerdict {
  result: StepResult;
  /** What every later step of the storyboard becomes. */
  halt?: SkipResult;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** `request_signing` of a capabilities answer, when it says `supported: true`. */
function advertisedCapability(data: unknown): AgentSigningCapability | undefined {
  const block = isObject(data) ? data.request_signing : undefined;
  if (!isObject(block) || block.supported !== true) return undefined;
  const policy =
    (['required', 'forbidden', 'either'] as const).find((p) => p === block.covers_content_digest) ?? 'either';
  return {
    coversContentDigest: policy,
    requiredFor: strings(block.required_for),
    warnFor: strings(block.warn_for),
    ...(Array.isArray(block.supported_for) && { supportedFor: strings(block.supported_for) }),
  };
}

/** runner-output-contract.yaml > not_applicable: the detail cites what the agent declared. */
function notAdvertisedDetail(data: Record<string, unknown>): string {
  const block = data.request_signing;
  const said = isObject(block)
    ? `request_signing.supported: ${JSON.stringify(block.supported ?? null)}`
    : 'no request_signing block';
  const protocols = strings(data.supported_protocols);
  const specialisms = strings(data.specialisms);
  return (
    `request_signing_not_advertised: the agent's get_adcp_capabilities declares ${said} (supported_protocols: [${protocols.join(', ')}], specialisms: [${specialisms.join(', ')}]), ` +
    'so it does not offer verified signed requests and signed_requests does not apply (signed-requests.yaml > Gating: "absence of advertisement is not a failure")'
  );
}

export class RequestSigningProbes {
  private capability?: CapabilityState;

  constructor(private readonly options: RequestSigningOptions) {}

  /** The storyboard step whose answer says whether the agent verifies signatures. */
  isCapabilityStep(phase: Phase, task: string): boolean {
    return (
      task === CAPABILITY_TASK &&
      !Object.hasOwn(VECTOR_PHASES, phase.id) &&
      synthesizesVectorSteps(this.options.storyboard)
    );
  }

  /**
   * The capability step's verdict: unchanged when the agent advertises
   * `request_signing.supported: true`; `not_applicable` for it and every later
   * step when it answers without it. A call that got no capabilities answer
   * keeps its failure; the vectors then skip `prerequisite_failed`.
   */
  capabilityVerdict(step: Step, phase: Phase, exchange: Exchange, graded: StepResult): CapabilityVerdict {
    const data = exchange.data;
    if (exchange.transportError || answerError(exchange) || !isObject(data)) {
      this.capability ??= {
        kind: 'unknown',
        skip: {
          reason: 'prerequisite_failed',
          detail: `prerequisite step "${step.id}" (phase ${phase.id}) got no capabilities answer, so whether the agent verifies request signatures is unknown`,
        },
      };
      return { result: graded };
    }
    const capability = advertisedCapability(data);
    const warnings = strings(data.specialisms).includes('signed-requests')
      ? [
          'the agent still claims the deprecated specialism "signed-requests"; request_signing.supported: true alone declares the capability (signed-requests.yaml > Backward-compatible specialism claims; the enum value goes in 4.0)',
        ]
      : [];
    const withNotices = (r: StepResult): StepResult =>
      warnings.length > 0 ? { ...r, warnings: [...(r.warnings ?? []), ...warnings] } : r;
    if (capability) {
      this.capability = { kind: 'advertised', capability };
      return { result: withNotices(graded) };
    }
    const skip: SkipResult = { reason: 'not_applicable', detail: notAdvertisedDetail(data) };
    this.capability = { kind: 'not_advertised', skip };
    return { result: withNotices({ ...graded, passed: true, skip }), halt: skip };
  }

  private async capabilityForVectors(): Promise<CapabilityState> {
    if (this.capability) return this.capability;
    // A storyboard without its capability step (or a run that never reached it): ask once.
    const exchange = await this.options.fetchCapabilities();
    const answered = !exchange.transportError && !answerError(exchange);
    const capability = answered ? advertisedCapability(exchange.data) : undefined;
    if (capability) this.capability = { kind: 'advertised', capability };
    else if (answered && isObject(exchange.data))
      this.capability = {
        kind: 'not_advertised',
        skip: { reason: 'not_applicable', detail: notAdvertisedDetail(exchange.data) },
      };
    else {
      this.capability = {
        kind: 'unknown',
        skip: {
          reason: 'prerequisite_failed',
          detail: `the runner's own get_adcp_capabilities call failed (${exchange.transportError ?? 'error answer'}), so whether the agent verifies request signatures is unknown`,
        },
      };
    }
    return this.capability;
  }

  /** Runs one synthesized step to its verdict. `result` is the engine's empty record for it. */
  async run(step: Step, result: StepResult, agent: AgentTools): Promise<StepResult> {
    if (isVectorErrorStep(step)) return { ...result, error: step.vector_error };
    if (!isVectorStep(step))
      return {
        ...result,
        error: `step "${step.id}" has task request_signing_probe but names no conformance vector (only the runner synthesizes these steps)`,
      };
    const ref = step.vector;
    const skipped = (skip: SkipResult): StepResult => ({
      ...result,
      passed: skip.reason !== 'prerequisite_failed',
      skip,
    });

    if (this.options.protocol !== 'mcp') {
      return skipped({
        reason: 'not_applicable',
        detail: `vector ${ref.id}: vitest-adcp sends the conformance vectors as MCP tools/call requests; grading them over ${this.options.protocol} is not implemented yet`,
      });
    }
    const state = await this.capabilityForVectors();
    if (state.kind !== 'advertised') return skipped(state.skip);
    const capability = state.capability;

    let set;
    try {
      set = vectorsIn(ref.dir);
    } catch (error) {
      return {
        ...result,
        error: `cannot read the conformance vectors in ${ref.dir}: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    const vector = set[ref.polarity].find((v) => v.id === ref.id);
    if (!vector) return { ...result, error: `the ${ref.polarity} vector ${ref.id} is no longer in ${ref.dir}` };

    const notApplicable = this.inapplicable(vector, capability);
    if (notApplicable) return skipped({ reason: 'not_applicable', detail: `vector ${vector.id}: ${notApplicable}` });

    const contract = this.contractFor(vector);
    if ('skip' in contract) return skipped(contract.skip);
    if ('fail' in contract) return { ...result, error: contract.fail };

    const operation = chooseOperation(vector, agent, capability);
    if ('skip' in operation) return skipped(operation.skip);

    const grader = new VectorGrader(this.options, vector, set.keys, ref, operation.operation, capability, result, step);
    if (operation.note) grader.notes.push(operation.note);
    try {
      if (vector.requiresContract === 'replay_window') return await grader.replay(contract.terms);
      if (vector.requiresContract === 'rate_abuse') return await grader.rateAbuse(contract.terms);
      return await grader.single(vector.requiresContract === 'revocation' ? contract.terms : undefined);
    } catch (error) {
      if (error instanceof VectorNotReproducible)
        return skipped({ reason: 'not_applicable', detail: `vector ${vector.id}: ${error.message}` });
      throw error;
    }
  }

  /** Why the vector does not apply to this agent as it declares itself, or undefined. */
  private inapplicable(vector: SigningVector, capability: AgentSigningCapability): string | undefined {
    if (vector.raw.jwks_override !== undefined) {
      return (
        "it presents a key that is not in keys.json (jwks_override), which a black-box runner cannot install in the agent's verifier " +
        '(the test kit registers the keys.json keys only), so the agent cannot be graded on it'
      );
    }
    try {
      urlEdge(vector, this.options.agentUrl);
    } catch (error) {
      if (error instanceof VectorNotReproducible) return error.message;
      throw error;
    }
    const policy = vector.verifierCapability?.coversContentDigest ?? 'either';
    const agentPolicy = capability.coversContentDigest;
    const code = vector.expectedOutcome.success ? undefined : vector.expectedOutcome.errorCode;
    const coversDigest = /"content-digest"/.test(fieldValue(vector.request.headers, 'signature-input') ?? '');
    const profile = `it assumes a verifier with covers_content_digest: ${policy}; the agent declares "${agentPolicy}"`;
    if (code === 'request_signature_components_incomplete' && policy === 'required' && agentPolicy !== 'required')
      return `${profile}, under which an uncovered content-digest is accepted`;
    if (code === 'request_signature_components_unexpected' && policy === 'forbidden' && agentPolicy !== 'forbidden')
      return `${profile}, under which a covered content-digest is accepted`;
    if (
      coversDigest &&
      agentPolicy === 'forbidden' &&
      code !== 'request_signature_header_malformed' &&
      code !== 'request_signature_components_unexpected'
    ) {
      return `it covers content-digest; the agent declares covers_content_digest: forbidden, so it must reject the request with request_signature_components_unexpected before reaching what the vector tests`;
    }
    return undefined;
  }

  /** The test-kit contract terms a vector needs, or why it fails (never skips) without them. */
  private contractFor(
    vector: SigningVector,
  ): { terms?: Record<string, unknown> } | { skip: SkipResult } | { fail: string } {
    const name = vector.requiresContract;
    if (name === undefined) return {};
    if (name === 'rate_abuse' && this.options.skipRateAbuse) {
      return {
        skip: {
          reason: 'unsatisfied_contract',
          detail: `rate_abuse_opt_out: the operator opted out of vector ${vector.id} (contract "rate_abuse" of signed_requests_runner: N+1 signed requests to fill the per-keyid replay cache)`,
        },
      };
    }
    const contracts = this.options.testKit?.stateful_vector_contract;
    const terms = isObject(contracts) ? contracts[name] : undefined;
    if (!isObject(terms)) {
      return {
        fail:
          `vector ${vector.id} requires the test-kit contract "${name}", and this run has no signed_requests_runner test kit declaring it ` +
          '(prerequisites.test_kit: test-kits/signed-requests-runner.yaml > stateful_vector_contract), so the runner cannot satisfy it: ' +
          'signed-requests.yaml grades such vectors FAIL, never SKIP',
      };
    }
    return { terms };
  }
}

/** Operations the agent verifies signatures on and enforces them (not warn_for; in supported_for/required_for when it lists any). */
function enforces(capability: AgentSigningCapability, operation: string): boolean {
  if (capability.warnFor.includes(operation) && !capability.requiredFor.includes(operation)) return false;
  return (
    capability.supportedFor === undefined ||
    capability.supportedFor.includes(operation) ||
    capability.requiredFor.includes(operation)
  );
}

/**
 * The AdCP operation the vector's `tools/call` names: the vector's own when
 * the agent implements it, else another mutating one it does (the storyboard:
 * "the runner picks operations available … operations the agent does not
 * implement are skipped, not failed"). An unsigned request that must be
 * rejected for being unsigned needs an operation in the agent's
 * `required_for`; a signed negative one an operation whose signatures the
 * agent enforces.
 */
function chooseOperation(
  vector: SigningVector,
  agent: AgentTools,
  capability: AgentSigningCapability,
): { operation: string; note?: string } | { skip: SkipResult } {
  const named = vectorOperation(vector);
  const tools = agent.tools;
  const candidates = candidateOperations(named, tools);
  const implemented = implementedOperations(candidates, named, tools);
  if (implemented.length === 0) return { skip: noCandidateImplemented(vector, candidates, tools) };
  const choice: Choice = { vector, named, tools, capability, implemented };
  const signed = hasSignatureFields(vector);
  const code = expectedErrorCode(vector);
  const requiredFor = vector.verifierCapability?.requiredFor ?? [];
  if (!signed && code === 'request_signature_required' && named !== undefined && requiredFor.includes(named))
    return unsignedToRequiredFor(choice);
  if (!signed && code === 'request_signature_required' && named !== undefined && !requiredFor.includes(named))
    return unsignedOutsideRequiredFor(choice);
  if (signed && !vector.expectedOutcome.success) return signedNegative(choice);
  const enforced = implemented.filter((op) => enforces(capability, op));
  return pickOperation(choice, enforced.length > 0 ? enforced : implemented);
}

/** What choosing among the operations a vector can be sent as depends on. */
interface Choice {
  vector: SigningVector;
  /** The vector's own operation, if its URL names one. */
  named: string | undefined;
  /** The agent's advertised tools; undefined when unknown. */
  tools: AgentTools['tools'];
  capability: AgentSigningCapability;
  /** The candidates the agent implements (or may, when its tools are unknown), in order of preference. */
  implemented: string[];
}

/** The vector's own operation, then the storyboard's mutating ones, then the agent's `acquire_*` tools; no repeats. */
function candidateOperations(named: string | undefined, tools: AgentTools['tools']): string[] {
  const acquire = tools ? [...tools].filter((t) => /^acquire_[a-z0-9_]+$/.test(t)).sort() : [];
  return [...new Set([named, ...MUTATING_OPERATIONS, ...acquire].filter((op): op is string => op !== undefined))];
}

/** The candidates the agent advertises; with its tools unknown, the vector's own operation (else the first candidate). */
function implementedOperations(candidates: string[], named: string | undefined, tools: AgentTools['tools']): string[] {
  return tools ? candidates.filter((op) => tools.has(op)) : named ? [named] : candidates.slice(0, 1);
}

function hasSignatureFields(vector: SigningVector): boolean {
  return (
    fieldValue(vector.request.headers, 'signature-input') !== undefined ||
    fieldValue(vector.request.headers, 'signature') !== undefined
  );
}

function expectedErrorCode(vector: SigningVector): string | undefined {
  return vector.expectedOutcome.success ? undefined : vector.expectedOutcome.errorCode;
}

function noCandidateImplemented(vector: SigningVector, candidates: string[], tools: AgentTools['tools']): SkipResult {
  const toolList = tools ? `[${[...tools].sort().join(', ')}]` : '(unknown)';
  return {
    reason: 'missing_tool',
    detail: `vector ${vector.id} is sent as one of [${candidates.join(', ')}], none of which the agent advertises (signed-requests.yaml: operations the agent does not implement are skipped, not failed); agent tools: ${toolList}`,
  };
}

/** The first of `ops`, with a note when it is not the vector's own operation. */
function pickOperation({ vector, named, tools }: Choice, ops: string[]): { operation: string; note?: string } {
  const operation = ops[0]!;
  return {
    operation,
    ...(operation !== named && {
      note: `sent as ${operation}: the vector's operation ${named ?? `(${vector.request.url})`} is ${named && tools?.has(named) ? 'not usable for it on this agent' : 'not one the agent implements'}`,
    }),
  };
}

/** An unsigned request that must be rejected for being unsigned: an operation in the agent's required_for. */
function unsignedToRequiredFor(choice: Choice): { operation: string; note?: string } | { skip: SkipResult } {
  const { vector, capability, implemented } = choice;
  const required = implemented.filter((op) => capability.requiredFor.includes(op));
  if (required.length === 0) {
    return {
      skip: {
        reason: 'not_applicable',
        detail: `vector ${vector.id}: it asserts that an unsigned request to an operation in required_for is rejected; the agent's request_signing.required_for is [${capability.requiredFor.join(', ')}], none of which it implements among [${implemented.join(', ')}], so it may accept unsigned requests`,
      },
    };
  }
  return pickOperation(choice, required);
}

/** A rule other than required_for (027: webhook credentials over bearer) must reject it: not on a required_for operation. */
function unsignedOutsideRequiredFor(choice: Choice): { operation: string; note?: string } | { skip: SkipResult } {
  const { vector, capability, implemented } = choice;
  const optional = implemented.filter((op) => !capability.requiredFor.includes(op));
  if (optional.length === 0) {
    return {
      skip: {
        reason: 'not_applicable',
        detail: `vector ${vector.id}: it asserts a rejection of an unsigned request to an operation outside required_for; every operation it can be sent as here ([${implemented.join(', ')}]) is in the agent's required_for [${capability.requiredFor.join(', ')}], so a rejection would not show the rule`,
      },
    };
  }
  return pickOperation(choice, optional);
}

/** A signed request that must be rejected: an operation whose signatures the agent enforces. */
function signedNegative(choice: Choice): { operation: string; note?: string } | { skip: SkipResult } {
  const { vector, capability, implemented } = choice;
  const enforced = implemented.filter((op) => enforces(capability, op));
  if (enforced.length === 0) {
    return {
      skip: {
        reason: 'not_applicable',
        detail: `vector ${vector.id}: the agent enforces request signatures on none of [${implemented.join(', ')}] (warn_for [${capability.warnFor.join(', ')}], supported_for [${(capability.supportedFor ?? []).join(', ')}]), so it may accept a bad signature there`,
      },
    };
  }
  return pickOperation(choice, enforced);
}
