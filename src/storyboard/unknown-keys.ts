/**
 * Keys the storyboard format does not define. An unknown key is far more
 * often a typo that silently disables something (`valdations:` means "no
 * validations", `sample_requst:` sends an empty request) than a field of a
 * newer format version, so by default each is an error (rule `unknown_key`),
 * located at the key, with the key probably meant. Authors of storyboards for
 * a newer format version opt out with `strictKeys: false`: then only a key
 * that is almost a known one is reported, as a warning.
 *
 * The known keys at each level are the schema's `properties` (the schema
 * stays the single list); objects the schema leaves open (`sample_request`,
 * `context`, webhook `filter`, fixture entries) are not looked into, and
 * annotations (`x-…`, `$comment`) are never unknown.
 */
import { closestMatch } from './did-you-mean.js';
import type { DiagnosticSink } from './diagnostics.js';
import { forwardNote, type KeyPolicy } from './format.js';
import { derefSchema, storyboardSchema, type SchemaNode } from './schema.js';
import { describeOwner, isPlainObject } from './paths.js';
import type { DataPath, SourceMap } from './source-map.js';

/** How a hint tells a strict-mode author the way out for a storyboard written for a newer format version. */
export const LENIENT_KEYS_ESCAPE =
  'for a storyboard of a newer format version, set adcpStoryboards({ strictKeys: false }) (CLI --lenient-keys)';

/** How the hint tells a strict-mode author the way out when the key is really meant. */
export const STRICT_KEYS_ESCAPE = `prefix your own annotations with "x-"; ${LENIENT_KEYS_ESCAPE}`;

export function checkUnknownKeys(
  data: unknown,
  map: SourceMap,
  sink: DiagnosticSink,
  policy: KeyPolicy = 'strict',
  formatVersion?: string,
): void {
  walk(data, storyboardSchema(), [], { root: data, map, sink, policy, formatVersion });
}

interface WalkContext {
  root: unknown;
  map: SourceMap;
  sink: DiagnosticSink;
  policy: KeyPolicy;
  formatVersion: string | undefined;
}

function walk(value: unknown, schemaNode: SchemaNode | undefined, path: DataPath, ctx: WalkContext): void {
  const schema = derefSchema(schemaNode);
  if (!schema) return;
  if (Array.isArray(value)) {
    const items = derefSchema(schema.items);
    if (items) value.forEach((item, i) => walk(item, items, [...path, i], ctx));
    return;
  }
  if (!isPlainObject(value)) return;
  const properties = objectProperties(schema);
  if (!properties) return;
  const known = Object.keys(properties);
  for (const [key, child] of Object.entries(value)) {
    if (Object.hasOwn(properties, key)) {
      walk(child, properties[key], [...path, key], ctx);
      continue;
    }
    // `$comment`, `x-…`: annotations by convention, never typos (the schema's patternProperties).
    if (key.startsWith('$') || key.startsWith('x-')) continue;
    const at = ctx.map.keyLocation([...path, key]);
    const owner = describeOwner(ctx.root, path);
    // A near miss of a key the object already has is a second spelling, not a typo of it.
    const guess = closestMatch(key, known);
    const suggestion = guess && !Object.hasOwn(value, guess) ? guess : undefined;
    if (ctx.policy === 'forward') {
      // Forward compatibility: a key of a newer format is kept and named, whatever it looks like.
      ctx.sink.warning(
        'unknown_key',
        at,
        `unknown key "${key}" in ${owner} (ignored)`,
        `${forwardNote(ctx.formatVersion)}${suggestion ? `; or did you mean "${suggestion}"?` : ''}`,
      );
    } else if (ctx.policy === 'strict') {
      ctx.sink.error(
        'unknown_key',
        at,
        `unknown key "${key}" in ${owner}`,
        suggestion
          ? `did you mean "${suggestion}"? (${STRICT_KEYS_ESCAPE})`
          : `the storyboard format has no such key here; ${STRICT_KEYS_ESCAPE}`,
      );
    } else if (suggestion) {
      ctx.sink.warning('unknown_key', at, `unknown key "${key}" in ${owner}`, `did you mean "${suggestion}"?`);
    }
  }
}

/** The properties of an object schema, merging object branches of an `anyOf` (e.g. `auth`). */
function objectProperties(schema: SchemaNode): Record<string, SchemaNode> | undefined {
  if (schema.properties) return schema.properties;
  const branches = (schema.anyOf ?? []).map((b) => derefSchema(b)).filter((b) => b?.properties);
  if (branches.length === 0) return undefined;
  return Object.assign({}, ...branches.map((b) => b!.properties));
}
