/**
 * One conformance vector (test-vectors/request-signing) as a request to the
 * agent under test: the vector's own request, moved to the agent's MCP
 * endpoint and re-signed now, with the defect it documents kept.
 *
 * The vector file is the specification of its defect. Its `Signature-Input`
 * names the covered components and every parameter; the runner re-signs with
 * the same components, the same `keyid` / `alg` / `tag`, the same parameters
 * present or absent, and `created` / `expires` at the same distance from now
 * as they were from the vector's `reference_now` (so 003 is still expired and
 * 004 still 1200 s long). A fresh nonce replaces the vector's. What that
 * cannot express is taken from the vector as well:
 *
 * - no signature headers (001, 027): sent unsigned;
 * - `Signature` without `Signature-Input` (019): signed, then the input dropped;
 * - a `Content-Digest` that does not hash the vector's body (010, a lying
 *   signer): that value is signed and sent as it is; an honest one is
 *   recomputed for the body actually sent;
 * - expected `request_signature_invalid` (015): the signature bytes are zeroed;
 * - further labels (004's `sig2`): re-declared with their own components and a
 *   zero signature, as in the vector;
 * - expected `request_signature_header_malformed` (011, 021–024, 026): the
 *   malformed fields are sent byte for byte (only `created`/`expires` moved
 *   and nonces refreshed), and a non-ASCII host (026) goes on the wire as the
 *   Host header.
 *
 * MCP agents have one endpoint, so the request goes to the agent's URL as a
 * JSON-RPC `tools/call` of the vector's operation with the vector's body as
 * its arguments (the operation is chosen by the caller). Pure apart from the
 * nonces (injectable).
 */
import { randomBytes } from 'node:crypto';
import { checkContentDigest } from '../../signing/content-digest.js';
import type { AdcpJwk } from '../../signing/keys.js';
import { fieldValue } from '../../signing/message.js';
import { REQUEST_SIGNING } from '../../signing/profiles.js';
import { signRequest } from '../../signing/sign.js';
import { parseSignature, parseSignatureInput, type ParsedSignatureInput } from '../../signing/signature-input.js';
import { encodeBase64Url, parseStrictDictionary } from '../../signing/structured-fields.js';
import type { SigningVector, TestKey } from '../../signing/vectors.js';

export type DigestPolicy = 'required' | 'forbidden' | 'either';

export interface BuildTarget {
  /** The agent's MCP endpoint. */
  url: string;
  /** The AdCP operation the `tools/call` names. */
  operation: string;
  /** The agent's advertised `request_signing.covers_content_digest`. */
  digestPolicy: DigestPolicy;
  /** `Authorization` to send (the operator's credential); absent: the vector's own, if any. */
  authorization?: string;
  /** JSON-RPC id. */
  rpcId: string | number;
}

export interface BuildOptions {
  /** Unix seconds the signature is made at. */
  now: number;
  /** Fresh nonces; default 16 random bytes, base64url. */
  nonce?: () => string;
  /** Sign as this keyid instead of the vector's (the test kit's `pre_revoked_keyid` for 017). */
  keyid?: string;
}

export interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** A Host header to put on the wire instead of the URL's authority (raw UTF-8 bytes for a U-label). */
  host?: string;
  body: string;
  /** The parsed JSON-RPC body, for the step record. */
  payload: unknown;
  /** How the request departs from the vector file, beyond the endpoint and the fresh times (for the record). */
  notes: string[];
}

/** Why a vector cannot be sent to this agent as it stands (graded not_applicable by the caller). */
export class VectorNotReproducible extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'VectorNotReproducible';
  }
}

const SIGNATURE_HEADERS = new Set(['signature', 'signature-input', 'content-digest']);
const DEFAULT_COMPONENTS = ['@method', '@target-uri', '@authority', 'content-type'];

const defaultNonce = () => encodeBase64Url(randomBytes(16));

function header(headers: Record<string, string>, name: string): string | undefined {
  return fieldValue(headers, name);
}

/** The vector's operation: the last segment of its URL path, when it is an AdCP operation name. */
export function vectorOperation(vector: SigningVector): string | undefined {
  const match = /^[a-z]+:\/\/[^/?#]*([^?#]*)/i.exec(vector.request.url);
  const last = match?.[1]?.split('/').filter(Boolean).at(-1);
  return last && /^[a-z][a-z0-9_]*$/.test(last) ? last : undefined;
}

/** The pieces of a vector URL as written (no normalisation: the edges are what a vector tests). */
function rawUrlParts(url: string): { authority: string; path: string; query?: string } {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)([^?#]*)(\?[^#]*)?/i.exec(url);
  return { authority: match?.[1] ?? '', path: match?.[2] ?? '', ...(match?.[3] !== undefined && { query: match[3] }) };
}

/**
 * What the vector's URL tests beyond the plain `https://host/adcp/<operation>`,
 * and whether it can be put on the agent's endpoint. Throws
 * {@link VectorNotReproducible} for an edge the agent's URL decides (port,
 * path) — sending the vector elsewhere would test vector 001 again under
 * another name. Returns the query to append and the Host to send, if any.
 */
export function urlEdge(vector: SigningVector, agentUrl: string): { query?: string; host?: string; note?: string } {
  const raw = rawUrlParts(vector.request.url);
  const agent = new URL(agentUrl);
  const hostPart = raw.authority.replace(/^[^@]*@/, '');
  const ipv6 = hostPart.startsWith('[');
  const port = ipv6 ? /\]:\d*$/.test(hostPart) : /:\d*$/.test(hostPart);
  if (port) {
    throw new VectorNotReproducible(
      `the vector's edge is the explicit port in ${vector.request.url}: an MCP agent is reached at its own endpoint (${agent.host}), and an HTTP client never puts a default port on the wire, so the edge cannot be reproduced`,
    );
  }
  if (!/^(\/[A-Za-z0-9_-]+)*\/?$/.test(raw.path)) {
    throw new VectorNotReproducible(
      `the vector's edge is its path ${JSON.stringify(raw.path)} (dot segments or percent-encoding): an MCP agent has one endpoint (${agent.pathname}) and names the operation in the body, so the path edge cannot be reproduced`,
    );
  }
  if (ipv6 && !agent.hostname.startsWith('[')) {
    throw new VectorNotReproducible(
      `the vector's edge is the IPv6 literal authority ${hostPart}; the agent's URL has the host ${agent.hostname}, so the edge cannot be reproduced (run against an [IPv6] agent URL to grade it)`,
    );
  }
  const out: { query?: string; host?: string; note?: string } = {};
  if (ipv6) out.note = `the agent's own IPv6 literal authority (${agent.host}) carries the vector's edge`;
  if (/[^\x00-\x7f]/.test(hostPart)) {
    out.host = hostPart;
    out.note = `Host: ${hostPart} (the vector's non-ASCII U-label, as raw UTF-8 bytes) instead of ${agent.host}`;
  }
  if (raw.query !== undefined) {
    if (agent.search)
      throw new VectorNotReproducible(
        `the vector's edge is its query ${raw.query}, and the agent's URL has a query of its own (${agent.search})`,
      );
    out.query = raw.query;
    out.note = `the vector's query ${raw.query} appended to the agent's URL, byte for byte`;
  }
  return out;
}

/** The JSON-RPC `tools/call` carrying the vector's body as the operation's arguments. */
function envelope(vector: SigningVector, target: BuildTarget): { body: string; payload: unknown } {
  const args = vector.request.body.trim() === '' ? {} : (JSON.parse(vector.request.body) as unknown);
  const payload = {
    jsonrpc: '2.0',
    id: target.rpcId,
    method: 'tools/call',
    params: { name: target.operation, arguments: args },
  };
  return { body: JSON.stringify(payload), payload };
}

/** The vector's header fields other than the signature ones and Host, plus what every MCP POST needs. */
function baseHeaders(vector: SigningVector, target: BuildTarget): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(vector.request.headers)) {
    const lower = name.toLowerCase();
    if (SIGNATURE_HEADERS.has(lower) || lower === 'host') continue;
    headers[lower] = value;
  }
  headers['content-type'] ??= 'application/json';
  // Streamable HTTP: a POST must accept both; not a covered component, so it does not touch the signature.
  headers.accept = 'application/json, text/event-stream';
  if (target.authorization) headers.authorization = target.authorization;
  return headers;
}

function keyFor(keys: readonly TestKey[], vector: SigningVector, keyid: string | undefined): AdcpJwk {
  const byKid = (kid: string | undefined) => (kid === undefined ? undefined : keys.find((k) => k.kid === kid));
  // An unknown keyid (008) is signed with the vector's referenced key: the agent must not find the kid at all.
  const referenced = Array.isArray(vector.raw.jwks_ref)
    ? (vector.raw.jwks_ref as unknown[]).find((k): k is string => typeof k === 'string')
    : undefined;
  const key = byKid(keyid) ?? byKid(referenced) ?? keys[0];
  if (!key) throw new Error(`keys.json has no key to sign vector ${vector.id} with`);
  return key.privateJwk;
}

function zeroSignature(label: string, length = 64): string {
  return `${label}=:${encodeBase64Url(new Uint8Array(length))}:`;
}

/** Moves `created=`/`expires=` by `delta` and gives each `nonce="…"` a fresh value, leaving every other byte alone. */
function freshen(value: string, delta: number, nonce: () => string): string {
  return value
    .replace(/\b(created|expires)=(-?\d+)/g, (_, name: string, n: string) => `${name}=${Number(n) + delta}`)
    .replace(/\bnonce="[^"]*"/g, () => `nonce="${nonce()}"`);
}

/** The labels of a well-formed Signature-Input, in order; undefined when it does not parse (strictly). */
function labelsOf(signatureInput: string): string[] | undefined {
  try {
    return [...parseStrictDictionary(signatureInput).dictionary.keys()];
  } catch {
    return undefined;
  }
}

/** What every way of building a vector's request shares: the request as it will go out, and the vector's signature fields. */
interface Draft {
  vector: SigningVector;
  keys: readonly TestKey[];
  target: BuildTarget;
  options: BuildOptions;
  nonce: () => string;
  /** Seconds from the vector's `reference_now` to now: what `created` / `expires` move by. */
  delta: number;
  /** The request's fields but its headers, in the order the built request has them. */
  base: Omit<BuiltRequest, 'headers'>;
  headers: Record<string, string>;
  notes: string[];
  vectorHeaders: Record<string, string>;
  signatureInput?: string;
  signature?: string;
  /** The error code the vector expects; undefined for a positive vector. */
  expected?: string;
}

/**
 * The request to send for `vector` (whose applicability the caller has
 * decided: operation chosen, URL edge and digest policy checked).
 */
export function buildVectorRequest(
  vector: SigningVector,
  keys: readonly TestKey[],
  target: BuildTarget,
  options: BuildOptions,
): BuiltRequest {
  const draft = draftRequest(vector, keys, target, options);
  const { signatureInput, signature } = draft;

  // Unsigned (001, 027): the vector's request without any signature.
  if (signatureInput === undefined && signature === undefined) return built(draft);

  // The malformed-header vectors: their fields go out byte for byte, only the times and nonces refreshed.
  if (signatureInput !== undefined && draft.expected === 'request_signature_header_malformed')
    return sendMalformedFields(draft, signatureInput);

  // Signature without Signature-Input (019): a real signature whose input is missing.
  if (signatureInput === undefined) return signWithoutInput(draft);

  return resignEveryLabel(draft, signatureInput);
}

/** The vector's request on the agent's endpoint, not yet signed. */
function draftRequest(
  vector: SigningVector,
  keys: readonly TestKey[],
  target: BuildTarget,
  options: BuildOptions,
): Draft {
  const nonce = options.nonce ?? defaultNonce;
  const delta = options.now - vector.referenceNow;
  const edge = urlEdge(vector, target.url);
  const url = edge.query ? `${target.url}${edge.query}` : target.url;
  const { body, payload } = envelope(vector, target);
  const headers = baseHeaders(vector, target);
  const notes: string[] = edge.note ? [edge.note] : [];
  const vectorHeaders = vector.request.headers;
  const signatureInput = header(vectorHeaders, 'signature-input');
  const signature = header(vectorHeaders, 'signature');
  const expected = vector.expectedOutcome.success ? undefined : vector.expectedOutcome.errorCode;
  const base = {
    method: vector.request.method,
    url,
    body,
    payload,
    notes,
    ...(edge.host !== undefined && { host: edge.host }),
  };
  return {
    vector,
    keys,
    target,
    options,
    nonce,
    delta,
    base,
    headers,
    notes,
    vectorHeaders,
    signatureInput,
    signature,
    expected,
  };
}

function built(draft: Draft): BuiltRequest {
  return { ...draft.base, headers: draft.headers };
}

/** The malformed signature fields as the vector has them, only `created` / `expires` moved and nonces refreshed. */
function sendMalformedFields(draft: Draft, signatureInput: string): BuiltRequest {
  const headers = draft.headers;
  headers['signature-input'] = freshen(signatureInput, draft.delta, draft.nonce);
  if (draft.signature !== undefined) headers.signature = draft.signature;
  const digest = header(draft.vectorHeaders, 'content-digest');
  if (digest !== undefined) headers['content-digest'] = digest;
  draft.notes.push(
    'the malformed signature fields are sent as the vector has them (created/expires moved to now, nonces refreshed)',
  );
  return built(draft);
}

/** A real signature over the default components, sent without its Signature-Input. */
function signWithoutInput(draft: Draft): BuiltRequest {
  const { base, headers, options } = draft;
  const key = keyFor(draft.keys, draft.vector, options.keyid);
  const signed = signRequest(
    { method: base.method, url: base.url, headers, body: base.body },
    {
      key,
      keyid: key.kid ?? 'unknown',
      tag: REQUEST_SIGNING.tag,
      components: DEFAULT_COMPONENTS,
      now: options.now,
      nonce: draft.nonce(),
    },
  );
  headers.signature = signed.headers.Signature;
  return built(draft);
}

/** Every label of the vector's Signature-Input signed again now, with its own components and parameters. */
function resignEveryLabel(draft: Draft, signatureInput: string): BuiltRequest {
  const labels = labelsOf(signatureInput);
  if (!labels || labels.length === 0)
    throw new Error(
      `vector ${draft.vector.id}: its Signature-Input does not parse, and it does not expect request_signature_header_malformed`,
    );
  const inputs: string[] = [];
  const signatures: string[] = [];
  for (const [index, label] of labels.entries()) {
    const signed = resignLabel(draft, signatureInput, label, index);
    inputs.push(signed.input);
    signatures.push(signed.signature);
  }
  draft.headers['signature-input'] = inputs.join(', ');
  draft.headers.signature = signatures.join(', ');
  return built(draft);
}

/** One label's Signature-Input member and Signature member (zeroed where the vector's is). */
function resignLabel(
  draft: Draft,
  signatureInput: string,
  label: string,
  index: number,
): { input: string; signature: string } {
  const parsed: ParsedSignatureInput = parseSignatureInput(signatureInput, label);
  const components = coveredComponents(draft, parsed, index);
  const message = messageToSign(draft, components);
  const signed = signAsDeclared(draft, message, parsed, components, label, index);
  if (signed.headers['Content-Digest'] !== undefined)
    draft.headers['content-digest'] = signed.headers['Content-Digest'];
  const zero =
    (index === 0 && draft.expected === 'request_signature_invalid') || (index > 0 && zeroBytes(draft.signature, label));
  const signature = zero ? zeroSignature(label) : signed.headers.Signature;
  if (index === 0 && draft.expected === 'request_signature_invalid')
    draft.notes.push('signature bytes zeroed (64 zero bytes), as in the vector');
  if (index > 0)
    draft.notes.push(
      `label ${label} re-declared with its own components${zero ? ' and a zero signature, as in the vector' : ''}`,
    );
  return { input: signed.headers['Signature-Input'], signature };
}

/**
 * The components a label covers: the vector's, with content-digest added or
 * dropped on the first label when the vector leaves coverage to the
 * verifier's policy and the agent declares one.
 */
function coveredComponents(draft: Draft, parsed: ParsedSignatureInput, index: number): string[] {
  let components = [...parsed.components];
  const policy = draft.vector.verifierCapability?.coversContentDigest ?? 'either';
  if (
    index === 0 &&
    policy === 'either' &&
    draft.target.digestPolicy === 'required' &&
    !components.includes('content-digest')
  ) {
    components.push('content-digest');
    draft.notes.push(
      'content-digest covered: the agent declares covers_content_digest: required, and the vector leaves coverage to the verifier\'s policy ("either")',
    );
  }
  if (
    index === 0 &&
    policy === 'either' &&
    draft.target.digestPolicy === 'forbidden' &&
    components.includes('content-digest')
  ) {
    components = components.filter((c) => c !== 'content-digest');
    draft.notes.push(
      'content-digest not covered: the agent declares covers_content_digest: forbidden, and the vector leaves coverage to the verifier\'s policy ("either")',
    );
  }
  return components;
}

/** The message a label signs: the request as sent, with the vector's own Content-Digest where that one lies. */
function messageToSign(
  draft: Draft,
  components: string[],
): { method: string; url: string; headers: Record<string, string>; body: string } {
  const { base, vectorHeaders } = draft;
  const message = { method: base.method, url: base.url, headers: { ...draft.headers }, body: base.body };
  const vectorDigest = header(vectorHeaders, 'content-digest');
  if (
    components.includes('content-digest') &&
    vectorDigest !== undefined &&
    !digestHashes(vectorDigest, draft.vector.request.body)
  ) {
    // The vector's signer lies about the body (010): sign that very value.
    message.headers['content-digest'] = vectorDigest;
    draft.headers['content-digest'] = vectorDigest;
  }
  return message;
}

/**
 * Signs `message` for `label` with the vector's parameters: the same keyid
 * (the caller's on the first label, if any), alg and tag, `created` /
 * `expires` moved by the draft's delta, a fresh nonce where the vector has one.
 */
function signAsDeclared(
  draft: Draft,
  message: { method: string; url: string; headers: Record<string, string>; body: string },
  parsed: ParsedSignatureInput,
  components: string[],
  label: string,
  index: number,
): ReturnType<typeof signRequest> {
  const { options, delta } = draft;
  const params = parsed.params;
  const keyid = index === 0 && options.keyid !== undefined ? options.keyid : params.keyid;
  const key = keyFor(draft.keys, draft.vector, keyid);
  return signRequest(message, {
    key,
    keyid: keyid ?? key.kid ?? 'unknown',
    tag: params.tag ?? REQUEST_SIGNING.tag,
    components,
    ...(params.alg !== undefined && { alg: params.alg }),
    created: params.created === undefined ? null : params.created + delta,
    expires: params.expires === undefined ? null : params.expires + delta,
    nonce: params.nonce === undefined ? null : draft.nonce(),
    label,
    now: options.now,
  });
}

function digestHashes(digest: string, body: string): boolean {
  try {
    return checkContentDigest(digest, body).ok;
  } catch {
    return false;
  }
}

/** Whether the vector's signature for `label` is all zero bytes (a placeholder that must not verify). */
function zeroBytes(signature: string | undefined, label: string): boolean {
  if (signature === undefined) return true;
  try {
    return parseSignature(signature, label).every((b) => b === 0);
  } catch {
    return true;
  }
}
