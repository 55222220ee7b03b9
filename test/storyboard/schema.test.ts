import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';

const schemaFile = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../schema/storyboard.schema.json');
const schema = JSON.parse(readFileSync(schemaFile, 'utf8'));

describe('schema/storyboard.schema.json', () => {
  it('is a valid draft-07 schema with a stable $id', () => {
    const ajv = new Ajv({ strict: true, strictRequired: false });
    expect(ajv.validateSchema(schema)).toBe(true);
    expect(schema.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(schema.$id).toBe('https://unpkg.com/vitest-adcp/schema/storyboard.schema.json');
  });

  it('describes every property and never closes an object (editors show the descriptions)', () => {
    const problems: string[] = [];
    const visit = (node: unknown, where: string) => {
      if (Array.isArray(node)) return node.forEach((n, i) => visit(n, `${where}[${i}]`));
      if (typeof node !== 'object' || node === null) return;
      const n = node as Record<string, unknown>;
      if (n.additionalProperties === false) problems.push(`${where}: additionalProperties false`);
      for (const [name, prop] of Object.entries((n.properties as Record<string, Record<string, unknown>>) ?? {})) {
        if (!prop.description && !prop.$ref) problems.push(`${where}.${name}: no description`);
      }
      for (const [key, child] of Object.entries(n)) visit(child, `${where}/${key}`);
    };
    visit(schema, '#');
    expect(problems).toEqual([]);
  });
});
