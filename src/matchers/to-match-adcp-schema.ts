import { defaultSchemasDir } from '../corpus.js';
import { SchemaNotFoundError, schemaRegistryFor, type SchemaRegistry } from '../schemas/registry.js';
import { describeObserved, judge, type ObservedAnswer } from './answer.js';
import type { MatcherContext, MatcherResult } from './types.js';

export interface AdcpSchemaOptions {
  /** AdCP JSON Schema directory. @default the installed @adcp/sdk's newest (as the plugin's `schemasDir`) */
  schemasDir?: string;
}

/** Schema errors listed in a failure message; the rest are counted. */
const MAX_LISTED_ERRORS = 20;

/**
 * `expect(res).toMatchAdcpSchema('media-buy/list-creatives-response.json')`:
 * the task data (extracted as the engine extracts it) validates against an
 * AdCP JSON Schema, through the engine's schema registry — the check a
 * storyboard's `response_schema` makes. `ref` may be a schema path, a task
 * name (its response schema), or omitted (the response schema of the task the
 * received record called).
 */
export function toMatchAdcpSchema(
  this: MatcherContext,
  received: unknown,
  ref?: string,
  options: AdcpSchemaOptions = {},
): MatcherResult | Promise<MatcherResult> {
  const registry = registryFor(options);
  return judge(received, undefined, (answer) => {
    const path = schemaPathFor(registry, ref, answer);
    const identity = registry.identify(path);
    const hint = this.utils.matcherHint('toMatchAdcpSchema', 'answer', ref === undefined ? '' : 'ref', {
      isNot: this.isNot,
      promise: this.promise,
    });
    const data = answer.taskData?.data;
    if (data === undefined) {
      const why = answer.taskData
        ? `extraction path "${answer.taskData.extraction.path}"${answer.taskData.extraction.note ? `: ${answer.taskData.extraction.note}` : ''}`
        : describeObserved(answer);
      return {
        pass: false,
        message: () =>
          `${hint}\n\nExpected ${answer.subject} to match ${this.utils.printExpected(identity.schema_id)}\nReceived: no task data (${why})`,
      };
    }
    const verdict = registry.validate(path, data);
    const listed = verdict.errors.slice(0, MAX_LISTED_ERRORS).map((e) => `  ${e.instance_path || '/'}: ${e.message}`);
    const more =
      verdict.errors.length > MAX_LISTED_ERRORS ? [`  … and ${verdict.errors.length - MAX_LISTED_ERRORS} more`] : [];
    return {
      pass: verdict.valid,
      message: () =>
        verdict.valid
          ? `${hint}\n\nExpected ${answer.subject} not to match ${this.utils.printExpected(verdict.schema_id)}, but it does`
          : `${hint}\n\nExpected ${answer.subject} to match ${this.utils.printExpected(verdict.schema_id)}\nReceived ${this.utils.printReceived(`${verdict.errors.length} schema error${verdict.errors.length === 1 ? '' : 's'}`)} (instance path: message):\n${[...listed, ...more].join('\n')}\n\nSchema: ${verdict.schema_url}`,
    };
  });
}

function registryFor(options: AdcpSchemaOptions): SchemaRegistry {
  const dir = options.schemasDir ?? defaultSchemasDir();
  if (!dir)
    throw new Error(
      'toMatchAdcpSchema: no AdCP JSON Schemas found. Install @adcp/sdk (npm i -D @adcp/sdk), or pass { schemasDir } with a schema directory',
    );
  return schemaRegistryFor(dir);
}

/** A schema path from the matcher's `ref`: a path the registry serves, a task name (its response schema), or the received task's. */
function schemaPathFor(registry: SchemaRegistry, ref: string | undefined, answer: ObservedAnswer): string {
  if (ref === undefined) {
    const forTask = answer.task ? registry.responseSchemaFor(answer.task) : undefined;
    if (forTask) return forTask;
    throw new TypeError(
      `toMatchAdcpSchema: ${answer.task ? `no response schema is known for task "${answer.task}"` : `${answer.subject} does not say which task it answers`}; name the schema, e.g. toMatchAdcpSchema('media-buy/list-creatives-response.json')`,
    );
  }
  if (registry.resolveRef(ref)) return ref;
  const forTask = registry.responseSchemaFor(ref);
  if (forTask) return forTask;
  throw new SchemaNotFoundError(ref, registry.dir);
}
