/**
 * One conformance vector sent to the agent — or its contract's sequence: 016's replay, 020's flood, 017's revoked
 * keyid — and graded on the answer (probe.ts decides first whether the vector applies).
 */
import { randomUUID } from 'node:crypto';
import { filterResponseHeaders } from '../../model/redact.js';
import { signatureErrorCode } from '../../signing/www-authenticate.js';
import type { SigningVector, TestKey } from '../../signing/vectors.js';
import type { Step } from '../../model/storyboard.js';
import { parseAnswerBody, sendRaw, type RawFailure, type RawResponse } from '../../transport/raw-http.js';
import type { VectorRef } from '../../plan/signing-vectors.js';
import {
  failsStep,
  type RequestRecord,
  type ResponseRecord,
  type StepResult,
  type ValidationResult,
} from '../../model/records.js';
import { buildVectorRequest, type BuiltRequest } from './build.js';
import type { AgentSigningCapability, RequestSigningOptions } from './options.js';

interface Observed {
  response: RawResponse;
  record: ResponseRecord;
  /** The `error` parameter of the Signature challenge, if any. */
  code?: string;
}

/** Sends one vector (or its contract's sequence) and grades the answer. */
export class VectorGrader {
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
    const passed = error === undefined && !validations.some(failsStep);
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
