/**
 * The AdCP schema registry's ref resolution (src/schemas/registry.ts): exact
 * paths, `$id`-style refs, the by-file-name fallback for schemas a storyboard
 * names by the domain that uses them, and what a response_schema validation
 * reports when a ref resolves to nothing.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../src/checks/index.js';
import { defaultSchemasDir } from '../../src/corpus.js';
import { gradeStep } from '../../src/engine/grade.js';
import { Ajv, type ValidateFunction } from 'ajv';
import { AJV_OPTIONS, flattenSources, SchemaRegistry, schemaRegistryFor } from '../../src/schemas/registry.js';
import type { Step } from '../../src/model/storyboard.js';

const registry = schemaRegistryFor(defaultSchemasDir()!);
const at = { line: 1, column: 1 };

describe('resolveRef', () => {
  it('resolves an exact path, and an $id-style ref to the same file', () => {
    expect(registry.resolveRef('media-buy/get-products-response.json')).toBe('media-buy/get-products-response.json');
    expect(registry.resolveRef('/schemas/3.0.6/media-buy/get-products-response.json')).toBe(
      'media-buy/get-products-response.json',
    );
  });

  it('creative/build-creative-response.json resolves to media-buy/build-creative-response.json (the one non-bundled file of that name)', () => {
    expect(registry.resolveRef('creative/build-creative-response.json')).toBe('media-buy/build-creative-response.json');
    expect(registry.identify('creative/build-creative-response.json')).toEqual({
      schema_id: '/schemas/3.0.6/media-buy/build-creative-response.json',
      schema_url: 'https://adcontextprotocol.org/schemas/3.0.6/media-buy/build-creative-response.json',
    });
    expect(registry.validate('creative/build-creative-response.json', {}).schema_id).toBe(
      '/schemas/3.0.6/media-buy/build-creative-response.json',
    );
  });

  it('does not guess between two files of the same name, nor invent one', () => {
    // creative/ and media-buy/ both ship list-creative-formats-response.json.
    expect(registry.resolveRef('signals/list-creative-formats-response.json')).toBeUndefined();
    expect(registry.resolveRef('media-buy/no-such-response.json')).toBeUndefined();
    expect(() => registry.identify('media-buy/no-such-response.json')).toThrow(
      /no AdCP schema "media-buy\/no-such-response.json"/,
    );
  });
});

describe('response_schema with a ref that resolves to nothing', () => {
  it('fails, and still reports the schema_id / schema_url the ref asked for', () => {
    const step: Step = {
      id: 'built',
      task: 'build_creative',
      response_schema_ref: 'media-buy/no-such-response.json',
      validations: [{ check: 'response_schema', description: 'matches the schema', loc: at }],
      loc: at,
    };
    const exchange: Exchange = {
      request: { transport: 'mcp', operation: 'build_creative', payload: {} },
      response: { transport: 'mcp', payload: { isError: false, structuredContent: {} }, status: 200 },
      extraction: { path: 'structured_content' },
      data: {},
    };
    const graded = gradeStep({
      file: '/virtual/x.yaml',
      step,
      task: 'build_creative',
      exchange,
      schemas: registry,
      scope: { context: new Map(), priorSteps: new Map() },
    });
    expect(graded.passed).toBe(false);
    expect(graded.validations[0]).toMatchObject({
      check: 'response_schema',
      passed: false,
      json_pointer: null,
      expected: '/schemas/3.0.6/media-buy/no-such-response.json',
      actual: { reason: 'schema_not_found', ref: 'media-buy/no-such-response.json' },
      schema_id: '/schemas/3.0.6/media-buy/no-such-response.json',
      schema_url: 'https://adcontextprotocol.org/schemas/3.0.6/media-buy/no-such-response.json',
      request: exchange.request,
      response: exchange.response,
    });
  });
});

describe('what opening a registry reads', () => {
  // Every run opens one, and a worker whose storyboards the run host runs opens runs only for their bounds: the tree
  // below the directory and its manifest are read on first use, not when the registry is made.
  it('the directory itself only: files under it are listed when a schema is first asked for, and a missing directory fails at once', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vitest-adcp-registry-'));
    try {
      mkdirSync(join(dir, 'core'));
      const lazy = new SchemaRegistry(dir);
      writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ adcp_version: '9.9.9', tools: {} }));
      writeFileSync(
        join(dir, 'core', 'late.json'),
        JSON.stringify({ $id: '/schemas/9.9.9/core/late.json', type: 'object' }),
      );
      expect(lazy.version).toBe('9.9.9');
      expect(lazy.resolveRef('core/late.json')).toBe('core/late.json');
      expect(lazy.validate('core/late.json', []).valid).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(() => new SchemaRegistry(join(dir, 'gone'))).toThrow(/ENOENT/);
  });
});

describe("the code a compiled validator keeps (for the validator cache's standalone code)", () => {
  it('is flattened in it and in every validator it reaches, each once, through cycles, and nothing else is read', () => {
    const read: string[] = [];
    const code = (name: string) => ({ charCodeAt: () => read.push(name) }) as unknown as string;
    const validator = (name: string, refs: unknown[] = []) =>
      Object.assign(() => true, {
        source: {
          validateCode: code(name),
          scopeValues: { validate: new Set(refs.map((ref) => ({ value: { ref } }))) },
        },
      }) as unknown as ValidateFunction;
    const leaf = validator('leaf');
    const mid = validator('mid', [leaf, /a regexp/, { not: 'a function' }]);
    const root = validator('root', [mid, leaf]);
    // A cycle back to the root, a format function without a source, a value without a ref.
    (leaf.source!.scopeValues as Record<string, Set<unknown>>).validate!.add({ value: { ref: root } });
    (root.source!.scopeValues as Record<string, Set<unknown>>).formats = new Set([{ value: { ref: () => true } }, {}]);
    flattenSources(root);
    expect(read.sort()).toEqual(['leaf', 'mid', 'root']);
  });

  it('reaches the validators of the schemas a schema refers to, as ajv compiles them (code.source)', () => {
    const ajv = new Ajv({ ...AJV_OPTIONS });
    // b and c refer to each other: each is its own function (ajv inlines only schemas without refs).
    ajv.addSchema({ $id: 'https://x.invalid/b.json', type: 'object', properties: { c: { $ref: 'c.json' } } });
    ajv.addSchema({ $id: 'https://x.invalid/c.json', type: 'object', properties: { b: { $ref: 'b.json' } } });
    const root = ajv.compile({ $id: 'https://x.invalid/a.json', properties: { b: { $ref: 'b.json' } } });
    const seen = new Set<unknown>();
    flattenSources(root, seen);
    expect(seen.size).toBe(3);
    expect(root({ b: { c: { b: {} } } })).toBe(true);
    expect(root({ b: { c: 1 } })).toBe(false);
  });
});
