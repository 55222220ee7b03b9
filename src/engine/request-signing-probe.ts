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
 * not failed"), then the request (request-signing-build.ts) sent with undici,
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
import { randomUUID } from 'node:crypto';
import { answerError } from '../model/answer-error.js';
import type { Exchange } from '../model/exchange.js';
import { filterResponseHeaders } from '../model/redact.js';
import { fieldValue } from '../signing/message.js';
import { signatureErrorCode } from '../signing/www-authenticate.js';
import type { SigningVector, TestKey } from '../signing/vectors.js';
import type { Phase, Step, Storyboard, TestKit } from '../model/storyboard.js';
import { parseAnswerBody, sendRaw, type RawFailure, type RawResponse } from '../transport/raw-http.js';
import type { AgentTools } from './gate.js';
import {
  buildVectorRequest,
  urlEdge,
  VectorNotReproducible,
  vectorOperation,
  type BuiltRequest,
  type DigestPolicy,
} from './request-signing-build.js';
import {
  isVectorErrorStep,
  isVectorStep,
  synthesizesVectorSteps,
  VECTOR_PHASES,
  vectorsIn,
  type VectorRef,
} from './request-signing-steps.js';
import type { RequestRecord, ResponseRecord, SkipResult, StepResult, ValidationResult } from '../model/records.js';

/** What the agent advertises under `request_signing` (get-adcp-capabilities-response.json). */
export interface AgentSigningCapability {
  coversContentDigest: DigestPolicy;
  requiredFor: string[];
  warnFor: string[];
  /** Absent: every operation's signatures are verified. */
  supportedFor?: string[];
}

type CapabilityState =
  | { kind: 'advertised'; capability: AgentSigningCapability }
  | { kind: 'not_advertised'; skip: SkipResult }
  | { kind: 'unknown'; skip: SkipResult };

/** The storyboard's own list of operations the runner may sign (required_tools comment), after the vector's own. */
const MUTATING_OPERATIONS = ['create_media_buy', 'update_media_buy', 'sync_creatives', 'activate_signal'];

const CAPABILITY_TASK = 'get_adcp_capabilities';

export interface RequestSigningOptions {
  storyboard: Storyboard;
  agentUrl: string;
  /** How the agent is reached: the vectors go out as MCP `tools/call` POSTs. */
  protocol: 'mcp' | 'a2a';
  /** The `Authorization` value of the run's default credentials, if any. */
  authorization: () => string | undefined;
  timeoutMs: number;
  maxResponseBytes: number;
  testKit?: TestKit;
  /** The operator opted out of vector 020's flood (runner-output-contract.yaml: `rate_abuse_opt_out`). */
  skipRateAbuse?: boolean;
  /** Asks the agent for its capabilities when the storyboard's capability step did not run. */
  fetchCapabilities: () => Promise<Exchange>;
  /** Unix seconds; default the clock. */
  now?: () => number;
}

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
export function advertisedCapability(data: unknown): AgentSigningCapability | undefined {
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
export function chooseOperation(
  vector: SigningVector,
  agent: AgentTools,
  capability: AgentSigningCapability,
): { operation: string; note?: string } | { skip: SkipResult } {
  const named = vectorOperation(vector);
  const tools = agent.tools;
  const acquire = tools ? [...tools].filter((t) => /^acquire_[a-z0-9_]+$/.test(t)).sort() : [];
  const candidates = [
    ...new Set([named, ...MUTATING_OPERATIONS, ...acquire].filter((op): op is string => op !== undefined)),
  ];
  const implemented = tools ? candidates.filter((op) => tools.has(op)) : named ? [named] : candidates.slice(0, 1);
  const toolList = tools ? `[${[...tools].sort().join(', ')}]` : '(unknown)';
  const signed =
    fieldValue(vector.request.headers, 'signature-input') !== undefined ||
    fieldValue(vector.request.headers, 'signature') !== undefined;
  const code = vector.expectedOutcome.success ? undefined : vector.expectedOutcome.errorCode;
  const pick = (ops: string[]) => {
    const operation = ops[0]!;
    return {
      operation,
      ...(operation !== named && {
        note: `sent as ${operation}: the vector's operation ${named ?? `(${vector.request.url})`} is ${named && tools?.has(named) ? 'not usable for it on this agent' : 'not one the agent implements'}`,
      }),
    };
  };
  if (implemented.length === 0) {
    return {
      skip: {
        reason: 'missing_tool',
        detail: `vector ${vector.id} is sent as one of [${candidates.join(', ')}], none of which the agent advertises (signed-requests.yaml: operations the agent does not implement are skipped, not failed); agent tools: ${toolList}`,
      },
    };
  }
  const requiredFor = vector.verifierCapability?.requiredFor ?? [];
  if (!signed && code === 'request_signature_required' && named !== undefined && requiredFor.includes(named)) {
    const required = implemented.filter((op) => capability.requiredFor.includes(op));
    if (required.length === 0) {
      return {
        skip: {
          reason: 'not_applicable',
          detail: `vector ${vector.id}: it asserts that an unsigned request to an operation in required_for is rejected; the agent's request_signing.required_for is [${capability.requiredFor.join(', ')}], none of which it implements among [${implemented.join(', ')}], so it may accept unsigned requests`,
        },
      };
    }
    return pick(required);
  }
  if (!signed && code === 'request_signature_required' && named !== undefined && !requiredFor.includes(named)) {
    // A rule other than required_for (027: webhook credentials over bearer) must reject it: not on a required_for operation.
    const optional = implemented.filter((op) => !capability.requiredFor.includes(op));
    if (optional.length === 0) {
      return {
        skip: {
          reason: 'not_applicable',
          detail: `vector ${vector.id}: it asserts a rejection of an unsigned request to an operation outside required_for; every operation it can be sent as here ([${implemented.join(', ')}]) is in the agent's required_for [${capability.requiredFor.join(', ')}], so a rejection would not show the rule`,
        },
      };
    }
    return pick(optional);
  }
  if (signed && !vector.expectedOutcome.success) {
    const enforced = implemented.filter((op) => enforces(capability, op));
    if (enforced.length === 0) {
      return {
        skip: {
          reason: 'not_applicable',
          detail: `vector ${vector.id}: the agent enforces request signatures on none of [${implemented.join(', ')}] (warn_for [${capability.warnFor.join(', ')}], supported_for [${(capability.supportedFor ?? []).join(', ')}]), so it may accept a bad signature there`,
        },
      };
    }
    return pick(enforced);
  }
  const enforced = implemented.filter((op) => enforces(capability, op));
  return pick(enforced.length > 0 ? enforced : implemented);
}

interface Observed {
  response: RawResponse;
  record: ResponseRecord;
  /** The `error` parameter of the Signature challenge, if any. */
  code?: string;
}

/** Sends one vector (or its contract's sequence) and grades the answer. */
class VectorGrader {
  readonly notes: string[] = [];
  private readonly warnings: string[] = [];

  constructor(
    private readonly options: RequestSigningOptions,
    private readonly vector: SigningVector,
    private readonly keys: readonly TestKey[],
    private readonly ref: VectorRef,
    private readonly operation: string,
    private readonly capability: AgentSigningCapability,
    private readonly result: StepResult,
    private readonly step: Step,
  ) {}

  private now(): number {
    return this.options.now?.() ?? Math.floor(Date.now() / 1000);
  }

  private build(keyid?: string): BuiltRequest {
    const authorization = this.options.authorization();
    const built = buildVectorRequest(
      this.vector,
      this.keys,
      {
        url: this.options.agentUrl,
        operation: this.operation,
        digestPolicy: this.capability.coversContentDigest,
        rpcId: randomUUID(),
        ...(authorization !== undefined && { authorization }),
      },
      { now: this.now(), ...(keyid !== undefined && { keyid }) },
    );
    return built;
  }

  private async send(built: BuiltRequest): Promise<Observed | RawFailure> {
    const answer = await sendRaw(
      {
        method: built.method,
        url: built.url,
        headers: built.headers,
        body: built.body,
        ...(built.host !== undefined && { host: built.host }),
      },
      { timeoutMs: this.options.timeoutMs, maxResponseBytes: this.options.maxResponseBytes },
    );
    if ('error' in answer) return answer;
    const challenge = answer.headers.filter(([name]) => name === 'www-authenticate').map(([, value]) => value);
    const code = signatureErrorCode(challenge.length > 0 ? challenge : undefined);
    const contentType = answer.headers.find(([name]) => name === 'content-type')?.[1];
    const record: ResponseRecord = {
      transport: 'http',
      payload: parseAnswerBody(answer.body, contentType),
      status: answer.status,
      headers: filterResponseHeaders(answer.headers),
      duration_ms: answer.durationMs,
    };
    return { response: answer, record, ...(code !== undefined && { code }) };
  }

  private requestRecord(built: BuiltRequest): RequestRecord {
    return { transport: 'http', operation: this.operation, payload: built.payload, url: built.url };
  }

  private source() {
    return { file: this.options.storyboard.file, line: this.step.loc.line, column: this.step.loc.column };
  }

  private validation(fields: Omit<ValidationResult, 'source' | 'schema_id' | 'schema_url'>): ValidationResult {
    return { json_pointer: null, ...fields, schema_id: null, schema_url: null, source: this.source() };
  }

  /** The record of a graded answer: request, response, the signature fields sent (vitest-adcp extension). */
  private recorded(
    built: BuiltRequest,
    observed: Observed | undefined,
    validations: ValidationResult[],
    error?: string,
  ): StepResult {
    const passed = error === undefined && validations.every((v) => v.passed);
    return {
      ...this.result,
      passed,
      validations,
      request: this.requestRecord(built),
      ...(observed && { response: observed.record }),
      extraction: {
        path: 'none',
        note: 'request-signing probe: graded on the HTTP status and WWW-Authenticate, not on a task result',
      },
      signed_request: {
        vector: `${this.ref.polarity}/${this.vector.id}`,
        operation: this.operation,
        ...(built.headers['signature-input'] !== undefined && { signature_input: built.headers['signature-input'] }),
        ...(built.headers.signature !== undefined && { signature: built.headers.signature }),
        ...(built.headers['content-digest'] !== undefined && { content_digest: built.headers['content-digest'] }),
        ...(built.host !== undefined && { host: built.host }),
        notes: [...this.notes, ...built.notes],
      },
      ...(error !== undefined && { error }),
      ...(this.warnings.length > 0 && { warnings: [...(this.result.warnings ?? []), ...this.warnings] }),
    };
  }

  private failure(built: BuiltRequest, failure: RawFailure): StepResult {
    // Contract > step_result.error: transport-level, no validations attempted.
    return this.recorded(built, undefined, [], failure.error);
  }

  /** The verdict on one answer to this vector. */
  private grade(observed: Observed): ValidationResult[] {
    const { status } = observed.response;
    const code = observed.code;
    const name = this.vector.name;
    if (this.vector.expectedOutcome.success) {
      const accepted = status < 400 || status >= 500;
      if (status >= 500) {
        this.warnings.push(
          `HTTP ${status}: the agent did not reject the signature (a non-4xx answer, signed-requests.yaml > Grading), but it failed to serve the request (pass_criteria speaks of 2xx)`,
        );
      }
      return [
        this.validation({
          check: 'request_signature_accepted',
          passed: accepted,
          description: `the agent accepts positive vector ${this.vector.id} (${name}) with a non-4xx answer`,
          expected: 'a non-4xx HTTP status',
          actual: code !== undefined ? { status, signature_error: code } : { status },
          ...(!accepted && {
            error: `the agent rejected a correctly signed request with HTTP ${status}${code !== undefined ? ' and a Signature challenge (see actual)' : ''}: its verifier, or its registration of the keys.json keys (test-kits/signed-requests-runner.yaml > runner_signing_keys), disagrees with the AdCP profile`,
          }),
        }),
      ];
    }
    const expected = this.vector.expectedOutcome.errorCode;
    const codeMatches = code === expected;
    const hint =
      code === 'request_signature_invalid' &&
      ['request_signature_key_revoked', 'request_signature_rate_abuse', 'request_signature_replayed'].includes(expected)
        ? ' The verifier reached the cryptographic check (step 10) first: the revocation, per-keyid cap and replay checks must run before it (vector $comment: a step-ordering bug).'
        : '';
    return [
      this.validation({
        check: 'http_status',
        passed: status === 401,
        description: `the agent rejects negative vector ${this.vector.id} (${name}) with 401`,
        expected: 401,
        actual: status,
        ...(status !== 401 && {
          error:
            status < 400
              ? `the agent accepted a request it must reject: ${name}`
              : `the agent answered HTTP ${status}, not 401 with a Signature challenge`,
        }),
      }),
      this.validation({
        check: 'signature_error_code',
        passed: codeMatches,
        description: `WWW-Authenticate: Signature error="${expected}" (byte for byte)`,
        expected,
        actual: code ?? null,
        ...(!codeMatches && {
          error:
            (code === undefined
              ? 'the answer carries no WWW-Authenticate Signature challenge with an error parameter'
              : `the Signature challenge names a different error code than "${expected}"`) + `.${hint}`,
        }),
      }),
    ];
  }

  async single(revocation?: Record<string, unknown>): Promise<StepResult> {
    const revoked = typeof revocation?.pre_revoked_keyid === 'string' ? revocation.pre_revoked_keyid : undefined;
    if (revoked !== undefined && !this.keys.some((k) => k.kid === revoked)) {
      return {
        ...this.result,
        error: `the test kit's pre_revoked_keyid "${revoked}" is not in keys.json, so the runner cannot sign as it (contract "revocation"): graded FAIL, never SKIP`,
      };
    }
    const built = this.build(revoked);
    if (revoked !== undefined)
      this.notes.push(`signed as the test kit's pre_revoked_keyid ${revoked} (contract "revocation")`);
    const observed = await this.send(built);
    if ('error' in observed) return this.failure(built, observed);
    return this.recorded(built, observed, this.grade(observed));
  }

  /** 016 (contract replay_window, black_box_behavior: repeat_request): the same signed request twice. */
  async replay(terms: Record<string, unknown> | undefined): Promise<StepResult> {
    const maxInterval = typeof terms?.max_interval_seconds === 'number' ? terms.max_interval_seconds : undefined;
    if (terms?.black_box_behavior !== 'repeat_request' || maxInterval === undefined) {
      return {
        ...this.result,
        error: `the test kit's replay_window contract is not { black_box_behavior: repeat_request, max_interval_seconds }, so the runner cannot satisfy it: graded FAIL, never SKIP`,
      };
    }
    const built = this.build();
    this.notes.push(
      `contract replay_window: sent twice, byte for byte; the first must be accepted, the second rejected (at most ${maxInterval} s apart)`,
    );
    const firstAt = performance.now();
    const first = await this.send(built);
    if ('error' in first) return this.failure(built, first);
    const acceptedFirst = first.response.status < 400 || first.response.status >= 500;
    const firstValidation = this.validation({
      check: 'replay_first_accepted',
      passed: acceptedFirst,
      description: 'the first submission of the replayed request is accepted (contract replay_window)',
      expected: 'a non-4xx HTTP status',
      actual:
        first.code !== undefined
          ? { status: first.response.status, signature_error: first.code }
          : { status: first.response.status },
      ...(!acceptedFirst && {
        error:
          'the replay_window contract needs the first, valid submission accepted; the agent rejected it, so the replay could not be provoked (check its registration of the keys.json keys)',
      }),
    });
    if (!acceptedFirst) return this.recorded(built, first, [firstValidation]);
    const interval = (performance.now() - firstAt) / 1000;
    if (interval > maxInterval) {
      return this.recorded(
        built,
        first,
        [firstValidation],
        `the second submission could not be sent within max_interval_seconds (${maxInterval} s) of the first (${interval.toFixed(1)} s): contract replay_window not satisfied, graded FAIL`,
      );
    }
    const second = await this.send(built);
    if ('error' in second) return this.failure(built, second);
    return this.recorded(built, second, [firstValidation, ...this.grade(second)]);
  }

  /** 020 (contract rate_abuse): N distinct-nonce requests fill the per-keyid cap; the (N+1)th must be rejected. */
  async rateAbuse(terms: Record<string, unknown> | undefined): Promise<StepResult> {
    const cap =
      typeof terms?.grading_target_per_keyid_cap_requests === 'number'
        ? terms.grading_target_per_keyid_cap_requests
        : undefined;
    const windowSeconds = typeof terms?.window_seconds === 'number' ? terms.window_seconds : undefined;
    if (cap === undefined || !Number.isInteger(cap) || cap < 1 || cap > 100_000 || windowSeconds === undefined) {
      return {
        ...this.result,
        error:
          "the test kit's rate_abuse contract has no usable grading_target_per_keyid_cap_requests / window_seconds, so the runner cannot satisfy it: graded FAIL, never SKIP",
      };
    }
    const started = performance.now();
    const tally = new Map<string, number>();
    for (let i = 0; i < cap; i++) {
      const spent = (performance.now() - started) / 1000;
      if (spent > windowSeconds) {
        // The N+1 requests cannot all land within the window any more: stop flooding an agent for a vector already lost.
        return {
          ...this.result,
          error: `only ${i} of the ${cap} requests before the graded one were sent within the contract's window_seconds (${windowSeconds} s, ${spent.toFixed(1)} s elapsed): contract rate_abuse not satisfied, graded FAIL`,
        };
      }
      const filler = await this.send(this.build());
      const key =
        'error' in filler
          ? 'transport error'
          : `${filler.response.status}${filler.code !== undefined ? ` ${filler.code}` : ''}`;
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
    const built = this.build();
    const final = await this.send(built);
    const elapsed = (performance.now() - started) / 1000;
    const summary = `contract rate_abuse: ${cap} distinct-nonce requests first (answers: ${[...tally].map(([k, n]) => `${n}× ${k}`).join(', ')}), then this one, ${elapsed.toFixed(1)} s in all`;
    this.notes.push(summary);
    if ('error' in final) return this.failure(built, final);
    if (elapsed > windowSeconds) {
      return this.recorded(
        built,
        final,
        this.grade(final),
        `the ${cap + 1} requests took ${elapsed.toFixed(1)} s, beyond the contract's window_seconds (${windowSeconds}): contract rate_abuse not satisfied, graded FAIL`,
      );
    }
    return this.recorded(built, final, this.grade(final));
  }
}
