import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const schemaFile = path.join(repo, 'schema/storyboard.schema.json');
const schema = JSON.parse(readFileSync(schemaFile, 'utf8'));

describe('schema/storyboard.schema.json', () => {
  it('is a valid draft-07 schema with a stable $id, and compiles under ajv strict mode (strictRequired, strictTypes, …)', () => {
    const ajv = new Ajv({ strict: true });
    expect(ajv.validateSchema(schema)).toBe(true);
    expect(() => ajv.compile(schema)).not.toThrow();
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.$id).toBe('https://unpkg.com/vitest-adcp/schema/storyboard.schema.json');
  });

  it('describes every property and closes every object whose keys the format defines (annotations x-… / $… allowed)', () => {
    const problems: string[] = [];
    const open: string[] = [];
    const visit = (node: unknown, where: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => visit(n, `${where}[${i}]`));
      if (typeof node !== 'object' || node === null) return;
      const n = node as Record<string, unknown>;
      if (n.type === 'object' && n.additionalProperties !== false) open.push(where);
      if (
        n.additionalProperties === false &&
        JSON.stringify(n.patternProperties) !== JSON.stringify({ '^(x-|\\$)': {} })
      )
        problems.push(`${where}: closed without the annotation pattern`);
      for (const [name, prop] of Object.entries((n.properties as Record<string, Record<string, unknown>>) ?? {})) {
        if (
          typeof prop === 'object' &&
          !prop.description &&
          !prop.$ref &&
          !(where.includes('/anyOf') && Object.keys(prop).length === 0)
        )
          problems.push(`${where}.${name}: no description`);
      }
      for (const [key, child] of Object.entries(n)) visit(child, `${where}/${key}`);
    };
    visit(schema, '#');
    expect(problems).toEqual([]);
    // Free-form by design: literal context values and a webhook filter's payload fields.
    expect(open).toEqual(['#/properties/context', '#/definitions/step/properties/filter']);
  });

  describe('in an editor (validated with the shipped file itself, as yaml-language-server does)', () => {
    const validate = new Ajv({ strict: true, allErrors: true }).compile(schema);
    const storyboard = (step: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      id: 'a',
      title: 'A',
      ...extra,
      phases: [{ id: 'p', steps: [{ id: 's', task: 'get_products', ...step }] }],
    });
    const errors = (data: unknown) =>
      validate(data)
        ? []
        : validate.errors!.map(
            (e) =>
              `${e.instancePath} ${e.message}${e.params.additionalProperty ? ` ${e.params.additionalProperty}` : ''}`,
          );

    it('flags a check kind the format does not define', () => {
      expect(errors(storyboard({ validations: [{ check: 'field_presnet', path: 'products' }] }))).toEqual([
        '/phases/0/steps/0/validations/0/check must be equal to one of the allowed values',
      ]);
    });

    it('flags unknown keys (validation:, sample_requst:) at every level, but not annotations or free-form payloads', () => {
      expect(errors(storyboard({ validation: [], sample_requst: {} }))).toEqual([
        '/phases/0/steps/0 must NOT have additional properties validation',
        '/phases/0/steps/0 must NOT have additional properties sample_requst',
      ]);
      expect(errors(storyboard({ auth: { type: 'api_key', from_testkit: true } }))).toContain(
        '/phases/0/steps/0/auth must NOT have additional properties from_testkit',
      );
      expect(
        errors(
          storyboard(
            { 'x-owner': 'me', sample_request: { anything: { at: 'all' } } },
            { $comment: 'c', context: { mine: 1 } },
          ),
        ),
      ).toEqual([]);
    });

    it('accepts every storyboard of the bundled corpus (both cached versions) and the 3.1.0-rc.2 security_baseline', () => {
      const cache = path.join(repo, 'node_modules/@adcp/sdk/compliance/cache');
      const files = [
        ...readdirSync(cache).flatMap((version) => yamlUnder(path.join(cache, version))),
        path.join(repo, 'fixtures/spec/security-3.1.0-rc.2.yaml'),
      ];
      const rejected: string[] = [];
      let storyboards = 0;
      for (const file of files) {
        const data = parse(readFileSync(file, 'utf8'), { merge: true }) as Record<string, unknown> | null;
        if (!data || typeof data !== 'object' || !('phases' in data) || typeof data.id !== 'string') continue;
        storyboards++;
        if (!validate(data)) rejected.push(`${path.relative(cache, file)}: ${errors(data).join('; ')}`);
      }
      expect(rejected).toEqual([]);
      expect(storyboards).toBe(169); // 84 per cached version + rc.2
    });
  });
});

function yamlUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'test-kits' || entry.name === 'test-vectors' ? [] : yamlUnder(full);
    return entry.name.endsWith('.yaml') ? [full] : [];
  });
}
