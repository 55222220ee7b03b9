/**
 * Schemas without their annotations (src/schemas/annotations.ts): only `title`, `description`, `examples` and
 * `$comment` at schema positions go; a property named like one stays, data stays; and on the corpus's own schemas the
 * registry (which compiles the cleaned schemas) gives the errors a plain ajv compile of the files as written gives.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { defaultSchemasDir } from '../../src/corpus.js';
import { withoutAnnotations } from '../../src/schemas/annotations.js';
import { AJV_OPTIONS, SchemaRegistry } from '../../src/schemas/registry.js';

const require = createRequire(import.meta.url);

describe('withoutAnnotations', () => {
  it('drops the annotations at every schema position, and nothing else', () => {
    const prose = { title: 'T', description: 'D', examples: [{ description: 'kept in data' }], $comment: 'C' };
    const schema = {
      ...prose,
      type: 'object',
      required: ['description'],
      properties: {
        description: { ...prose, type: 'string', enum: ['a'], default: 'a' },
        title: { const: { title: 'data', description: 'data' } },
        list: { items: [{ ...prose, type: 'string' }], additionalItems: { ...prose } },
        one: { items: { ...prose, minimum: 1 } },
      },
      patternProperties: { '^x-': { ...prose } },
      additionalProperties: { ...prose, type: 'number' },
      definitions: { d: { ...prose, $ref: '#/properties/one' } },
      $defs: { e: { ...prose } },
      dependencies: { a: ['b'], c: { ...prose, required: ['d'] } },
      allOf: [{ ...prose }],
      anyOf: [{ ...prose }],
      oneOf: [{ ...prose }],
      not: { ...prose },
      if: { ...prose },
      then: { ...prose },
      else: { ...prose },
      contains: { ...prose },
      propertyNames: { ...prose, pattern: '^[a-z]+$' },
      'x-vendor': { description: 'a keyword ajv does not know: data, left as is' },
    };
    const before = JSON.stringify(schema);
    const clean = withoutAnnotations(schema);
    expect(JSON.stringify(schema)).toBe(before);
    expect(clean).toEqual({
      type: 'object',
      required: ['description'],
      properties: {
        description: { type: 'string', enum: ['a'], default: 'a' },
        title: { const: { title: 'data', description: 'data' } },
        list: { items: [{ type: 'string' }], additionalItems: {} },
        one: { items: { minimum: 1 } },
      },
      patternProperties: { '^x-': {} },
      additionalProperties: { type: 'number' },
      definitions: { d: { $ref: '#/properties/one' } },
      $defs: { e: {} },
      dependencies: { a: ['b'], c: { required: ['d'] } },
      allOf: [{}],
      anyOf: [{}],
      oneOf: [{}],
      not: {},
      if: {},
      then: {},
      else: {},
      contains: {},
      propertyNames: { pattern: '^[a-z]+$' },
      'x-vendor': { description: 'a keyword ajv does not know: data, left as is' },
    });
    expect(withoutAnnotations(true)).toBe(true);
    expect(withoutAnnotations([{ description: 'an array is not a schema object' }])).toEqual([
      { description: 'an array is not a schema object' },
    ]);
  });

  it('the registry gives the errors of a plain compile of the schemas as written', () => {
    const dir = defaultSchemasDir()!;
    const registry = new SchemaRegistry(dir);
    const { default: Ajv } = require('ajv') as typeof import('ajv');
    const { default: addFormats } = require('ajv-formats') as typeof import('ajv-formats');
    const plain = new Ajv({ ...AJV_OPTIONS });
    addFormats(plain);
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
      tools: Record<string, { response_schema?: string }>;
    };
    // Every schema file as written (the bundled/ copies aside, as the registry does), for the plain compile: it
    // resolves the $refs by $id.
    for (const file of schemaFiles(dir)) {
      const schema = JSON.parse(readFileSync(file, 'utf8'));
      if (typeof schema?.$id === 'string' && !(plain.schemas as Record<string, unknown>)[schema.$id])
        plain.addSchema(schema, schema.$id);
    }
    const documents = [
      {},
      { errors: [{}] },
      { errors: [{ code: 7, message: [] }], context: 'x' },
      { products: [{ product_id: 1, delivery_type: 'nope', pricing_options: [{}] }], status: 'unknown' },
      { media_buy_id: 'mb', packages: [{ package_id: 'p', status: 'nope' }], media_buy_status: 'nope' },
      { adcp: { major_versions: ['x'] }, supported_protocols: ['nope'] },
    ];
    const tasks = [
      'get_adcp_capabilities',
      'get_products',
      'create_media_buy',
      'update_media_buy',
      'get_media_buy_delivery',
      'sync_creatives',
      'list_creative_formats',
    ].filter((task) => manifest.tools[task]?.response_schema);
    expect(tasks.length).toBeGreaterThanOrEqual(6);
    let failing = 0;
    for (const task of tasks) {
      const ref = manifest.tools[task]!.response_schema!;
      const validate = plain.getSchema(registry.identify(ref).schema_id)!;
      for (const document of documents) {
        const verdict = registry.validate(ref, document);
        const valid = validate(document) as boolean;
        const errors = (validate.errors ?? []).map((e) => ({
          instance_path: e.instancePath,
          schema_path: e.schemaPath,
          keyword: e.keyword,
          message: e.message ?? e.keyword,
        }));
        expect({ task, document, valid: verdict.valid, errors: verdict.errors }).toEqual({
          task,
          document,
          valid,
          errors: valid ? [] : errors,
        });
        if (!valid) failing++;
      }
    }
    // The comparison covers errors, not only passes: most of these documents are wrong.
    expect(failing).toBeGreaterThan(tasks.length * 4);
  });
});

function schemaFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return name === 'bundled' ? [] : schemaFiles(full);
    return name.endsWith('.json') ? [full] : [];
  });
}
