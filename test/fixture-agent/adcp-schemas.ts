/**
 * AdCP 3.0.x JSON Schemas (draft-07) from @adcp/sdk, compiled with ajv so the
 * fixture agent's answers can be checked against the same artifacts a runner
 * applies. Every schema is registered by its `$id` (`/schemas/3.0.6/...`), which
 * is how they `$ref` each other.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import AjvModule, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv and ajv-formats are CommonJS with `exports.default`; under NodeNext the default import is the module object.
const Ajv = ((AjvModule as any).default ?? AjvModule) as typeof AjvModule.default;
type Ajv = InstanceType<typeof Ajv>;
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as typeof addFormatsModule.default;

const require = createRequire(import.meta.url);
/** dist/lib/schemas-data/3.0 inside the installed @adcp/sdk. */
export const SCHEMAS_DIR = join(dirname(require.resolve('@adcp/sdk/package.json')), 'dist/lib/schemas-data/3.0');

function* schemaFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* schemaFiles(path);
    else if (entry.name.endsWith('.json')) yield path;
  }
}

let cached: { ajv: Ajv; version: string } | undefined;

function load() {
  if (cached) return cached;
  // strict: false — the AdCP schemas use annotation keywords (enumDescriptions, discriminator, x-*) ajv does not know.
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  let version = '';
  for (const file of schemaFiles(SCHEMAS_DIR)) {
    const schema = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof schema.$id !== 'string') continue; // manifest.json and friends
    ajv.addSchema(schema);
    version ||= /^\/schemas\/([^/]+)\//.exec(schema.$id)?.[1] ?? '';
  }
  cached = { ajv, version };
  return cached;
}

/** `$id` of a schema given its path under schemas-data/3.0, e.g. "media-buy/get-products-response.json". */
export function schemaId(relativePath: string): string {
  return `/schemas/${load().version}/${relativePath}`;
}

export function validatorFor(relativePath: string): ValidateFunction {
  const validate = load().ajv.getSchema(schemaId(relativePath));
  if (!validate) throw new Error(`no AdCP schema ${schemaId(relativePath)}`);
  return validate;
}

/** Validates and returns readable errors ([] when valid). */
export function schemaErrors(relativePath: string, value: unknown): string[] {
  const validate = validatorFor(relativePath);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '/'} ${e.message} (${e.schemaPath})`);
}

/** The enum of AdCP error codes (enums/error-code.json). */
export function errorCodes(): string[] {
  return JSON.parse(readFileSync(join(SCHEMAS_DIR, 'enums/error-code.json'), 'utf8')).enum;
}
