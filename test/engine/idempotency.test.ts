/**
 * `idempotency_key` on mutating tasks (src/engine/idempotency.ts), against the
 * bundled AdCP schemas. grading-model.e2e.test.ts shows it on the wire.
 */
import { describe, expect, it } from 'vitest';
import { defaultSchemasDir } from '../../src/corpus.js';
import { withIdempotencyKey } from '../../src/engine/idempotency.js';
import { schemaRegistryFor } from '../../src/schemas/registry.js';
import type { Step } from '../../src/model/storyboard.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const step = (extra: Partial<Step> = {}) =>
  ({ id: 's', title: 's', task: 'create_media_buy', validations: [], loc: { line: 1, column: 1 }, ...extra }) as Step;

describe('withIdempotencyKey', () => {
  it('adds a fresh key to a mutating request that has none (or an empty one), keeping the rest', () => {
    const schemas = schemaRegistryFor(defaultSchemasDir()!);
    const first = withIdempotencyKey({ brand: 'b' }, 'create_media_buy', step(), schemas) as Record<string, unknown>;
    expect(first).toEqual({ brand: 'b', idempotency_key: expect.stringMatching(UUID_V4) });
    const second = withIdempotencyKey({ idempotency_key: '' }, 'create_media_buy', step(), schemas) as Record<
      string,
      unknown
    >;
    expect(second.idempotency_key).toMatch(UUID_V4);
    expect(second.idempotency_key).not.toBe(first.idempotency_key);
  });

  it('leaves a written key, omit_idempotency_key, reads, non-objects and a run without schemas alone', () => {
    const schemas = schemaRegistryFor(defaultSchemasDir()!);
    const written = { idempotency_key: 'k-1' };
    expect(withIdempotencyKey(written, 'create_media_buy', step(), schemas)).toBe(written);
    const payload = { brand: 'b' };
    expect(withIdempotencyKey(payload, 'create_media_buy', step({ omit_idempotency_key: true }), schemas)).toBe(
      payload,
    );
    expect(withIdempotencyKey(payload, 'get_products', step(), schemas)).toBe(payload);
    expect(withIdempotencyKey(payload, 'create_media_buy', step(), undefined)).toBe(payload);
    for (const odd of [null, 'text', [1]])
      expect(withIdempotencyKey(odd, 'create_media_buy', step(), schemas)).toBe(odd);
    expect(
      (withIdempotencyKey({ idempotency_key: 5 }, 'create_media_buy', step(), schemas) as Record<string, unknown>)
        .idempotency_key,
    ).toMatch(UUID_V4);
  });
});
