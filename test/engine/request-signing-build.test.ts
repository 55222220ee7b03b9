/**
 * The request each conformance vector becomes (src/roles/request-signing/build.ts),
 * checked against the vector's own expected outcome by a verifier configured
 * as the vector describes (test/signing/harness.ts): re-signed at the agent's
 * URL with fresh times, a positive vector still verifies and a negative one
 * still fails with exactly its code — the documented defect survives the move.
 */
import { describe, expect, it } from 'vitest';
import {
  buildVectorRequest,
  urlEdge,
  VectorNotReproducible,
  vectorOperation,
} from '../../src/roles/request-signing/build.js';
import {
  isSignatureRequired,
  MemoryReplayCache,
  parseSignatureInput,
  type SigningVector,
} from '../../src/signing/index.js';
import { VECTOR_SETS, verifyVector } from '../signing/harness.js';

const AGENT = 'http://agent.test:8080/mcp';
const set = VECTOR_SETS.find((s) => s.kind === 'request-signing')!;
const vectors = [...set.positive, ...set.negative];

/** Vectors whose defect an MCP endpoint can carry (the others are graded not_applicable by the probe). */
function reproducible(vector: SigningVector): boolean {
  if (vector.raw.jwks_override !== undefined) return false;
  try {
    urlEdge(vector, AGENT);
    return true;
  } catch (error) {
    if (error instanceof VectorNotReproducible) return false;
    throw error;
  }
}

function build(vector: SigningVector, now = vector.referenceNow) {
  const operation = vectorOperation(vector) ?? 'create_media_buy';
  let n = 0;
  const built = buildVectorRequest(
    vector,
    set.keys,
    {
      url: AGENT,
      operation,
      digestPolicy: vector.verifierCapability?.coversContentDigest ?? 'either',
      rpcId: 1,
      authorization: 'Bearer demo-x',
    },
    { now, nonce: () => `fresh-nonce-${vector.id}-${++n}-0123456789` },
  );
  return { built, operation };
}

describe('every reproducible vector keeps its outcome when re-signed at the agent URL', () => {
  for (const vector of vectors.filter(reproducible)) {
    it(`${vector.polarity} ${vector.id}`, async () => {
      const { built, operation } = build(vector);
      // The URL as the verifier rebuilds it from the Host it received.
      const url = built.host !== undefined ? built.url.replace('agent.test:8080', built.host) : built.url;
      const message = { method: built.method, url, headers: built.headers, body: built.body };
      const capability = vector.verifierCapability;
      const overrides = {
        signatureRequired: isSignatureRequired({
          operation,
          requiredFor: capability?.requiredFor ?? [],
          body: built.body,
        }),
      };
      if (vector.requiresContract === 'replay_window') {
        // Black box (test kit > replay_window): the same request twice; the first is accepted, the second is the replay.
        const replayCache = new MemoryReplayCache();
        expect(
          await verifyVector(vector, { message, withState: false, overrides: { ...overrides, replayCache } }),
        ).toMatchObject({ ok: true, signed: true });
        expect(
          await verifyVector(vector, { message, withState: false, overrides: { ...overrides, replayCache } }),
        ).toMatchObject({ ok: false, code: 'request_signature_replayed' });
        return;
      }
      const verdict = await verifyVector(vector, { message, overrides });
      if (vector.expectedOutcome.success)
        expect(verdict, JSON.stringify(verdict)).toMatchObject({ ok: true, signed: true });
      else
        expect(verdict, JSON.stringify(built.headers)).toMatchObject({
          ok: false,
          code: vector.expectedOutcome.errorCode,
        });
    });
  }
});

describe('the request on the wire', () => {
  const byId = (id: string) => vectors.find((v) => v.id === id)!;

  it('is a JSON-RPC tools/call of the operation at the agent URL, with the vector body as arguments and the operator credential', () => {
    const vector = byId('001-basic-post');
    const { built } = build(vector);
    expect(built.url).toBe(AGENT);
    expect(built.payload).toEqual({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'create_media_buy', arguments: JSON.parse(vector.request.body) },
    });
    expect(JSON.parse(built.body)).toEqual(built.payload);
    expect(built.headers).toMatchObject({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: 'Bearer demo-x',
    });
  });

  it('keeps the components, keyid, alg and tag and moves created/expires with the clock', () => {
    const vector = byId('004-window-too-long');
    const now = 2_000_000_000;
    const { built } = build(vector, now);
    const sent = parseSignatureInput(built.headers['signature-input']!);
    const original = parseSignatureInput(vector.request.headers['Signature-Input']!);
    expect(sent.components).toEqual(original.components);
    expect(sent.params).toMatchObject({
      keyid: original.params.keyid,
      alg: original.params.alg,
      tag: original.params.tag,
    });
    expect(sent.params.created! - now).toBe(original.params.created! - vector.referenceNow);
    expect(sent.params.expires! - sent.params.created!).toBe(1200);
    expect(sent.params.nonce).not.toBe(original.params.nonce);
  });

  it('leaves out what the vector leaves out (012: no expires, 014: no nonce)', () => {
    expect(
      parseSignatureInput(build(byId('012-missing-expires-param')).built.headers['signature-input']!).params.expires,
    ).toBeUndefined();
    expect(
      parseSignatureInput(build(byId('014-missing-nonce-param')).built.headers['signature-input']!).params.nonce,
    ).toBeUndefined();
  });

  it('signs a lying Content-Digest as it is (010) and recomputes an honest one for the body sent (002)', () => {
    expect(build(byId('010-content-digest-mismatch')).built.headers['content-digest']).toBe(
      byId('010-content-digest-mismatch').request.headers['Content-Digest'],
    );
    const honest = build(byId('002-post-with-content-digest')).built;
    expect(honest.headers['content-digest']).not.toBe(
      byId('002-post-with-content-digest').request.headers['Content-Digest'],
    );
    expect(honest.headers['signature-input']).toContain('"content-digest"');
  });

  it('sends the malformed fields of header_malformed vectors byte for byte, times moved (024) — and 026 its U-label Host', () => {
    const vector = byId('024-unquoted-string-param');
    const { built } = build(vector, vector.referenceNow + 1000);
    expect(built.headers['signature-input']).toContain('keyid=test-ed25519-2026;');
    expect(built.headers['signature-input']).toContain(`created=${vector.referenceNow + 1000};`);
    expect(build(byId('026-non-ascii-host')).built.host).toBe('bücher.example.com');
  });

  it("declares 004's second label with a zero signature, and zeroes 015's signature", () => {
    const two = build(byId('004-multiple-signature-labels')).built;
    expect(two.headers['signature-input']).toMatch(/^sig1=\(.*, sig2=\("@method" "@target-uri"\);/);
    expect(two.headers.signature).toMatch(/, sig2=:A{86}:$/);
    expect(build(byId('015-signature-invalid')).built.headers.signature).toBe(`sig1=:${'A'.repeat(86)}:`);
  });

  it('covers content-digest for an agent that requires it, when the vector leaves coverage open', () => {
    const vector = byId('008-unknown-keyid');
    const built = buildVectorRequest(
      vector,
      set.keys,
      { url: AGENT, operation: 'create_media_buy', digestPolicy: 'required', rpcId: 1 },
      { now: vector.referenceNow },
    );
    expect(built.headers['signature-input']).toContain('"content-digest"');
    expect(built.notes.join('\n')).toContain('covers_content_digest: required');
  });

  it('appends the query of 007 to the agent URL, and refuses edges an MCP endpoint cannot carry', () => {
    expect(build(byId('007-query-byte-preserved')).built.url).toBe(`${AGENT}?b=2&a=1&c=3`);
    for (const id of [
      '005-default-port-stripped',
      '006-dot-segment-path',
      '008-percent-encoded-path',
      '011-ipv6-authority',
    ]) {
      expect(() => urlEdge(byId(id), AGENT), id).toThrow(VectorNotReproducible);
    }
    expect(urlEdge(byId('011-ipv6-authority'), 'http://[::1]:8080/mcp').note).toContain('IPv6');
  });

  it('never carries key material', () => {
    for (const vector of vectors.filter(reproducible)) {
      const text = JSON.stringify(build(vector).built);
      for (const key of set.keys) expect(text).not.toContain(key.privateJwk.d);
    }
  });
});
