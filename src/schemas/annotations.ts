/**
 * A schema as ajv needs it to validate: without the keywords that only annotate (JSON Schema draft-07 §10: `title`,
 * `description`, `examples`; and `$comment`, §8.3), which no validation reads.
 *
 * Why: ajv's generated code refers to the schema object for its error parameters (an `enum`'s allowed values, say), so
 * a validator written out as code (validator-cache.ts) carries its schema as a literal — and the AdCP schemas are 40 %
 * prose (@adcp/sdk 13's 3.1 schemas: 1.2 of their 3.2 MB are `description`s). Every run that validates read, parsed and
 * kept that text in memory for nothing. Without it the verdicts and the errors are the same: an error names the
 * instance path, the schema path (through `properties`, `items`, … never through an annotation), the keyword and
 * ajv's message.
 *
 * Only schema positions are cleaned: a property that is *named* `description` (a key of `properties`) stays, and the
 * values of `enum`, `const`, `default` and of keywords ajv does not know are data, left as they are.
 */

/** Keywords whose value is a schema. */
const SCHEMA_VALUED = new Set([
  'additionalItems',
  'additionalProperties',
  'contains',
  'contentSchema',
  'else',
  'if',
  'not',
  'propertyNames',
  'then',
]);
/** Keywords whose value is an array of schemas (`items` may be either). */
const SCHEMA_ARRAYS = new Set(['allOf', 'anyOf', 'oneOf', 'items']);
/** Keywords whose value maps names to schemas (`dependencies`: to a schema or to a list of names). */
const SCHEMA_MAPS = new Set(['$defs', 'definitions', 'dependencies', 'patternProperties', 'properties']);
const ANNOTATIONS = new Set(['$comment', 'description', 'examples', 'title']);

/** A copy of `schema` without annotation keywords at any schema position; the input is not changed. */
export function withoutAnnotations(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(keyword)) continue;
    if (SCHEMA_VALUED.has(keyword)) out[keyword] = withoutAnnotations(value);
    else if (SCHEMA_ARRAYS.has(keyword))
      out[keyword] = Array.isArray(value) ? value.map(withoutAnnotations) : withoutAnnotations(value);
    else if (SCHEMA_MAPS.has(keyword) && value !== null && typeof value === 'object' && !Array.isArray(value))
      out[keyword] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withoutAnnotations(sub)]));
    else out[keyword] = value;
  }
  return out;
}
