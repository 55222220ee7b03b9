/**
 * Unknown keys are kept (the format is additive — see the schema's
 * `$comment`), but a key that is almost a known one is most likely a typo
 * that silently disables something (`valdations:` means "no validations").
 * Those get a warning with the key to use. The known keys at each level are
 * the schema's `properties`, so the schema stays the single list.
 */
import { closestMatch } from './did-you-mean.js';
import type { DiagnosticSink } from './diagnostics.js';
import { derefSchema, storyboardSchema, type SchemaNode } from './schema.js';
import { describeOwner, isPlainObject } from './paths.js';
import type { DataPath, SourceMap } from './source-map.js';

export function warnAboutMisspelledKeys(data: unknown, map: SourceMap, sink: DiagnosticSink): void {
  walk(data, storyboardSchema(), [], { root: data, map, sink });
}

interface WalkContext {
  root: unknown;
  map: SourceMap;
  sink: DiagnosticSink;
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
    // `$comment`, `x-…`: annotations by convention, never typos.
    if (key.startsWith('$') || key.startsWith('x-')) continue;
    const suggestion = closestMatch(key, known);
    if (suggestion && !Object.hasOwn(value, suggestion)) {
      ctx.sink.warning(
        'unknown_key',
        ctx.map.keyLocation([...path, key]),
        `unknown key "${key}" in ${describeOwner(ctx.root, path)}`,
        `did you mean "${suggestion}"?`,
      );
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

