/**
 * Loads the RFC 9421 conformance vectors a compliance tree ships under
 * `test-vectors/request-signing/` and `test-vectors/webhook-signing/`, typed
 * and normalized, so a caller can make one test per vector file and pick up
 * new vectors without code changes.
 *
 * Normalization smooths over the two folders' differences: `jwks_ref` /
 * `jwks_override` (a full JWKS in one, a by-kid patch in the other) become
 * the verifier's key list, and the several `test_harness_state` spellings
 * become one {@link VectorHarnessState}.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveCorpus } from '../corpus.js';
import type { AdcpJwk } from './keys.js';

export type VectorKind = 'request-signing' | 'webhook-signing';

/** A keypair from `keys.json`; public knowledge, for conformance testing only. */
export interface TestKey {
  kid: string;
  /** The JWK as a JWKS would publish it. */
  publicJwk: AdcpJwk;
  /** The same JWK with `d`, for signing. */
  privateJwk: AdcpJwk;
}

interface VectorRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** The exact body on the wire; empty for none. */
  body: string;
}

/** Verifier state a vector assumes before it is delivered. */
interface VectorHarnessState {
  /** `(keyid, nonce)` pairs already in the replay cache. */
  replayEntries: { keyid: string; nonce: string; ttlSeconds?: number }[];
  /** Kids on the current revocation list. */
  revokedKids: string[];
  /** A keyid whose per-keyid replay-cache cap is already reached. */
  capReachedFor?: string;
  /** Seconds since the revocation list was last refreshed, beyond its grace. */
  revocationStaleSeconds?: number;
}

type ExpectedOutcome = { success: true } | { success: false; errorCode: string; failedStep?: number | string };

export interface SigningVector {
  kind: VectorKind;
  /** File name without `.json`, e.g. `001-basic-post`. */
  id: string;
  polarity: 'positive' | 'negative';
  file: string;
  name: string;
  /** Unix seconds to use as the verifier's clock. */
  referenceNow: number;
  request: VectorRequest;
  /** The request-signing capability the verifier advertises (request vectors only). */
  verifierCapability?: { coversContentDigest: 'required' | 'forbidden' | 'either'; requiredFor: string[] };
  /** The verifier's view of the signer's JWKS for this vector. */
  jwks: AdcpJwk[];
  expectedSignatureBase?: string;
  expectedOutcome: ExpectedOutcome;
  harnessState?: VectorHarnessState;
  /** The test-kit contract a black-box runner needs for this vector (`replay_window`, `revocation`, …). */
  requiresContract?: string;
  /** The vector file as parsed, for fields not normalized here. */
  raw: Record<string, unknown>;
}

/** One `canonicalization.json` case. */
export interface CanonicalizationCase {
  name: string;
  rule: string;
  inputUrl: string;
  expected: { targetUri: string; authority: string } | { reject: true; reason: string; errorCode: string };
}

export interface SigningVectorSet {
  kind: VectorKind;
  dir: string;
  keys: TestKey[];
  positive: SigningVector[];
  negative: SigningVector[];
  /** `canonicalization.json` (request-signing only; webhooks share it). */
  canonicalization: CanonicalizationCase[];
}

class VectorFormatError extends Error {
  constructor(file: string, problem: string) {
    super(`${file}: ${problem}`);
    this.name = 'VectorFormatError';
  }
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Field readers that name the file and field when a vector does not have the expected shape. */
function reader(file: string) {
  const fail = (problem: string): never => {
    throw new VectorFormatError(file, problem);
  };
  return {
    fail,
    string: (obj: Json, key: string): string =>
      typeof obj[key] === 'string' ? (obj[key] as string) : fail(`"${key}" must be a string`),
    number: (obj: Json, key: string): number =>
      typeof obj[key] === 'number' ? (obj[key] as number) : fail(`"${key}" must be a number`),
    object: (obj: Json, key: string): Json =>
      isObject(obj[key]) ? (obj[key] as Json) : fail(`"${key}" must be an object`),
    strings: (obj: Json, key: string): string[] =>
      Array.isArray(obj[key]) && (obj[key] as unknown[]).every((item) => typeof item === 'string')
        ? (obj[key] as string[])
        : fail(`"${key}" must be a list of strings`),
  };
}

function readJson(file: string): Json {
  const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
  if (!isObject(parsed)) throw new VectorFormatError(file, 'is not a JSON object');
  return parsed;
}

/** A JWK without the vector files' annotations (`$comment`, the test-only private scalar). */
function publicPart(jwk: Json): AdcpJwk {
  const { $comment: _comment, _private_d_for_test_only: _d, ...rest } = jwk;
  return rest as AdcpJwk;
}

function readKeys(file: string): TestKey[] {
  const read = reader(file);
  const keys = readJson(file).keys;
  if (!Array.isArray(keys)) read.fail('"keys" must be a list');
  return (keys as unknown[]).map((entry) => {
    if (!isObject(entry)) return read.fail('every key must be an object');
    const publicJwk = publicPart(entry);
    return {
      kid: read.string(entry, 'kid'),
      publicJwk,
      privateJwk: { ...publicJwk, d: read.string(entry, '_private_d_for_test_only') },
    };
  });
}

function readJwks(vector: Json, keys: readonly TestKey[], read: ReturnType<typeof reader>): AdcpJwk[] {
  const refs = vector.jwks_ref === undefined ? [] : read.strings(vector, 'jwks_ref');
  const referenced = refs.map(
    (kid) =>
      keys.find((key) => key.kid === kid)?.publicJwk ??
      read.fail(`jwks_ref names "${kid}", which keys.json does not have`),
  );
  const override = vector.jwks_override;
  if (override === undefined) return referenced;
  if (!isObject(override)) return read.fail('"jwks_override" must be an object');
  // A full JWKS replaces the referenced keys…
  if (Array.isArray(override.keys))
    return override.keys.map((jwk) =>
      isObject(jwk) ? publicPart(jwk) : read.fail('jwks_override keys must be objects'),
    );
  // …a { kid: jwk } map substitutes those kids' entries.
  const patched = new Map(referenced.map((jwk) => [jwk.kid, jwk]));
  for (const [kid, jwk] of Object.entries(override)) {
    if (kid.startsWith('$')) continue;
    patched.set(kid, isObject(jwk) ? publicPart(jwk) : read.fail(`jwks_override["${kid}"] must be a JWK`));
  }
  return [...patched.values()];
}

function readHarnessState(vector: Json, read: ReturnType<typeof reader>): VectorHarnessState | undefined {
  if (vector.test_harness_state === undefined) return undefined;
  const state = read.object(vector, 'test_harness_state');
  const replayEntries = ((state.replay_cache_entries as unknown[] | undefined) ?? []).map((entry) => {
    if (!isObject(entry)) return read.fail('replay_cache_entries must hold objects');
    return {
      keyid: read.string(entry, 'keyid'),
      nonce: read.string(entry, 'nonce'),
      ...(typeof entry.ttl_seconds === 'number' && { ttlSeconds: entry.ttl_seconds }),
    };
  });
  const revocationList = isObject(state.revocation_list) ? state.revocation_list : undefined;
  const revokedKids = [
    ...(state.revoked_kids === undefined ? [] : read.strings(state, 'revoked_kids')),
    ...(revocationList?.revoked_kids === undefined ? [] : read.strings(revocationList, 'revoked_kids')),
  ];
  const capHit = isObject(state.replay_cache_per_keyid_cap_hit)
    ? read.string(state.replay_cache_per_keyid_cap_hit, 'keyid')
    : undefined;
  const capFilled =
    state.per_keyid_cap_filled_for === undefined ? undefined : read.string(state, 'per_keyid_cap_filled_for');
  const capReachedFor = capHit ?? capFilled;
  return {
    replayEntries,
    revokedKids,
    ...(capReachedFor !== undefined && { capReachedFor }),
    ...(typeof state.revocation_list_stale_seconds === 'number' && {
      revocationStaleSeconds: state.revocation_list_stale_seconds,
    }),
  };
}

function readVector(
  kind: VectorKind,
  polarity: SigningVector['polarity'],
  file: string,
  keys: readonly TestKey[],
): SigningVector {
  const read = reader(file);
  const raw = readJson(file);
  const request = read.object(raw, 'request');
  const headers = read.object(request, 'headers');
  for (const [name, value] of Object.entries(headers))
    if (typeof value !== 'string') read.fail(`request header "${name}" must be a string`);
  const outcome = read.object(raw, 'expected_outcome');
  if (typeof outcome.success !== 'boolean') read.fail('"expected_outcome.success" must be a boolean');
  if ((outcome.success === true) !== (polarity === 'positive'))
    read.fail(`a ${polarity} vector must expect success: ${polarity === 'positive'}`);
  const failedStep = outcome.failed_step;
  const expectedOutcome: ExpectedOutcome = outcome.success
    ? { success: true }
    : {
        success: false,
        errorCode: read.string(outcome, 'error_code'),
        ...((typeof failedStep === 'number' || typeof failedStep === 'string') && { failedStep }),
      };
  const capability = isObject(raw.verifier_capability) ? raw.verifier_capability : undefined;
  const harnessState = readHarnessState(raw, read);
  return {
    kind,
    id: file.replace(/^.*[/\\]/, '').replace(/\.json$/, ''),
    polarity,
    file,
    name: read.string(raw, 'name'),
    referenceNow: read.number(raw, 'reference_now'),
    request: {
      method: read.string(request, 'method'),
      url: read.string(request, 'url'),
      headers: headers as Record<string, string>,
      body: request.body === undefined ? '' : read.string(request, 'body'),
    },
    ...(capability && {
      verifierCapability: {
        coversContentDigest:
          (['required', 'forbidden', 'either'] as const).find(
            (policy) => policy === capability.covers_content_digest,
          ) ?? read.fail('"covers_content_digest" must be required, forbidden or either'),
        requiredFor: capability.required_for === undefined ? [] : read.strings(capability, 'required_for'),
      },
    }),
    jwks: readJwks(raw, keys, read),
    ...(typeof raw.expected_signature_base === 'string' && { expectedSignatureBase: raw.expected_signature_base }),
    expectedOutcome,
    ...(harnessState && { harnessState }),
    ...(typeof raw.requires_contract === 'string' && { requiresContract: raw.requires_contract }),
    raw,
  };
}

function readCanonicalization(file: string): CanonicalizationCase[] {
  const read = reader(file);
  const cases = readJson(file).cases;
  if (!Array.isArray(cases)) read.fail('"cases" must be a list');
  return (cases as unknown[]).map((entry) => {
    if (!isObject(entry)) return read.fail('every case must be an object');
    return {
      name: read.string(entry, 'name'),
      rule: read.string(entry, 'rule'),
      inputUrl: read.string(entry, 'input_url'),
      expected:
        entry.reject === true
          ? {
              reject: true,
              reason: read.string(entry, 'reject_reason'),
              errorCode: read.string(entry, 'expected_error_code'),
            }
          : {
              targetUri: read.string(entry, 'expected_target_uri'),
              authority: read.string(entry, 'expected_authority'),
            },
    };
  });
}

function vectorFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => join(dir, name));
}

export interface LoadVectorsOptions {
  /** A corpus version of the installed `@adcp/sdk` (`3.0.6`) or a path to a compliance tree; default the newest installed. */
  compliance?: string;
  /** Where to resolve `@adcp/sdk` from; default the working directory. */
  fromDir?: string;
}

/** The vector folder of `kind` in the selected compliance tree. */
function signingVectorsDir(kind: VectorKind, options: LoadVectorsOptions = {}): string {
  return join(resolveCorpus(options.compliance, options.fromDir).root, 'test-vectors', kind);
}

/**
 * Reads every vector of `kind` (and, for request signing, the
 * canonicalization cases) from a compliance tree, sorted by file name.
 * Throws {@link VectorFormatError} naming the file and field when a vector is
 * not shaped as the vector READMEs describe.
 */
export function loadSigningVectors(kind: VectorKind, options: LoadVectorsOptions = {}): SigningVectorSet {
  const dir = signingVectorsDir(kind, options);
  const keys = readKeys(join(dir, 'keys.json'));
  const canonicalizationFile = join(dir, 'canonicalization.json');
  return {
    kind,
    dir,
    keys,
    positive: vectorFiles(join(dir, 'positive')).map((file) => readVector(kind, 'positive', file, keys)),
    negative: vectorFiles(join(dir, 'negative')).map((file) => readVector(kind, 'negative', file, keys)),
    canonicalization: kind === 'request-signing' ? readCanonicalization(canonicalizationFile) : [],
  };
}
