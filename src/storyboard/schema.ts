/**
 * The storyboard JSON Schema (`schema/storyboard.schema.json`): read and
 * compiled once per process, on first use, and turned into diagnostics that
 * point at the YAML node each ajv error is about.
 *
 * The build compiles it ahead (scripts/build-storyboard-validator.mjs writes
 * `dist/storyboard/storyboard-validator.cjs`, ajv's standalone code): ajv's
 * compile of this schema is ~140 ms of every process that loads a user's
 * storyboard (a run, a Jest transformer, the bin), the prebuilt module a few.
 * It is used only when it was built from the very schema text read here.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { closestMatch } from './did-you-mean.js';
import type { DiagnosticSink } from './diagnostics.js';
import { formatPath, parsePointer } from './paths.js';
import type { SourceMap } from './source-map.js';

/** Minimal view of the JSON Schema subset our schema uses. */
export interface SchemaNode {
  $ref?: string;
  type?: string | string[];
  description?: string;
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  enum?: unknown[];
  const?: unknown;
  definitions?: Record<string, SchemaNode>;
  [keyword: string]: unknown;
}

// src/storyboard/ and dist/storyboard/ are both two levels below the package root.
const SCHEMA_URL = new URL('../../schema/storyboard.schema.json', import.meta.url);

/** Next to the compiled module (dist/storyboard/), from the build; absent under src/. */
const PREBUILT_VALIDATOR = new URL('./storyboard-validator.cjs', import.meta.url);

/**
 * allErrors: report every problem in one run; verbose: errors carry the failing
 * sub-schema so hints can quote its description.
 */
export const STORYBOARD_VALIDATOR_OPTIONS: Options = { allErrors: true, verbose: true, strict: true };

let schemaText: string | undefined;
let schema: SchemaNode | undefined;
let validator: ValidateFunction | undefined;

export function storyboardSchema(): SchemaNode {
  schema ??= JSON.parse(storyboardSchemaText()) as SchemaNode;
  return schema;
}

function storyboardSchemaText(): string {
  schemaText ??= readFileSync(SCHEMA_URL, 'utf8');
  return schemaText;
}

/** The digest the prebuilt validator carries: of the schema text it was compiled from. */
export function storyboardSchemaDigest(): string {
  return createHash('sha256').update(storyboardSchemaText()).digest('hex');
}

/** The schema as the loader validates it (see openedForLoader), for this module and the build's precompile. */
export function loaderSchema(): SchemaNode {
  return openedForLoader(storyboardSchema()) as SchemaNode;
}

function storyboardValidator(): ValidateFunction {
  validator ??=
    prebuiltValidator(PREBUILT_VALIDATOR, storyboardSchemaDigest()) ??
    new Ajv(STORYBOARD_VALIDATOR_OPTIONS).compile(loaderSchema());
  return validator;
}

/** The build's validator at `file`, when there is one and it was compiled from the schema text of `digest`; else undefined. */
export function prebuiltValidator(file: URL, digest: string): ValidateFunction | undefined {
  if (!existsSync(file)) return undefined;
  const prebuilt = createRequire(import.meta.url)(fileURLToPath(file)) as {
    schemaDigest?: string;
    default?: ValidateFunction;
  };
  return prebuilt.schemaDigest === digest && typeof prebuilt.default === 'function' ? prebuilt.default : undefined;
}

/**
 * The shipped schema is closed (additionalProperties: false, a `check` enum),
 * which is what an editor needs. The loader validates shapes and types against
 * a copy with those opened, and reports unknown keys (unknown-keys.ts) and
 * check names (rules/validations.ts) itself: located at the key rather than at
 * its object, with the closest known name, and as warnings under
 * `strictKeys: false`. (ajv would also fail a whole `anyOf`, e.g. `auth`, for
 * one unknown key and lose the did-you-mean.)
 */
function openedForLoader(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openedForLoader);
  if (node === null || typeof node !== 'object') return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === 'additionalProperties' && value === false) continue;
    if (key === 'patternProperties') continue;
    copy[key] = openedForLoader(value);
  }
  if (
    copy.type === 'string' &&
    Array.isArray(copy.enum) &&
    node === storyboardSchema().definitions?.validation?.properties?.check
  )
    delete copy.enum;
  return copy;
}

/** Follow a local `#/definitions/x` reference. */
export function derefSchema(node: SchemaNode | undefined): SchemaNode | undefined {
  if (!node?.$ref) return node;
  const name = node.$ref.replace(/^#\/definitions\//, '');
  return storyboardSchema().definitions?.[name];
}

export function validateAgainstSchema(data: unknown, map: SourceMap, sink: DiagnosticSink): void {
  const validate = storyboardValidator();
  if (validate(data)) return;
  for (const error of selectReportableErrors(validate.errors ?? [])) {
    const path = parsePointer(error.instancePath);
    const { message, hint } = describeError(error);
    sink.error('schema', map.valueLocation(path), `${formatPath(path)}: ${message}`, hint);
  }
}

/**
 * ajv reports an `anyOf` failure plus every failure of every branch. When one
 * branch got past the shape check (its errors are all deeper in the data),
 * the author clearly meant that branch: report its errors (recursively, for
 * nested anyOfs). Otherwise report one combined message for the `anyOf`.
 */
function selectReportableErrors(errors: readonly ErrorObject[]): ErrorObject[] {
  const anyOfs = errors.filter((e) => e.keyword === 'anyOf');
  const result: ErrorObject[] = [];
  for (const error of errors) {
    if (anyOfs.some((a) => isOwnedBy(error, a))) continue; // decided with its anyOf below
    if (error.keyword !== 'anyOf') {
      result.push(error);
      continue;
    }
    const branches = new Map<string, ErrorObject[]>();
    for (const e of errors) {
      if (!isOwnedBy(e, error)) continue;
      const branch = e.schemaPath.slice(error.schemaPath.length + 1).split('/')[0]!;
      branches.set(branch, [...(branches.get(branch) ?? []), e]);
    }
    const deeper = [...branches.values()].find((list) =>
      list.every((e) => e.instancePath.length > error.instancePath.length),
    );
    if (deeper) result.push(...selectReportableErrors(deeper));
    else result.push({ ...error, params: { ...error.params, branches: [...branches.values()] } });
  }
  return result;
}

/** `e` is a branch failure of the anyOf error `a`: below it in the schema, at or below it in the data. */
function isOwnedBy(e: ErrorObject, a: ErrorObject): boolean {
  return (
    e !== a &&
    e.schemaPath.startsWith(`${a.schemaPath}/`) &&
    (e.instancePath === a.instancePath || e.instancePath.startsWith(`${a.instancePath}/`))
  );
}

interface Described {
  message: string;
  hint?: string;
}

function describeError(error: ErrorObject): Described {
  const parent = error.parentSchema as SchemaNode | undefined;
  const about = firstSentence(parent?.description);
  switch (error.keyword) {
    case 'required': {
      const property = String(error.params.missingProperty);
      const propertySchema = derefSchema(parent?.properties?.[property]);
      const what = firstSentence(propertySchema?.description);
      return {
        message: `must have required property '${property}'`,
        hint: `add \`${property}:\`${what ? ` — ${what}` : ''}`,
      };
    }
    case 'type':
      return {
        message: `must be ${article(String(error.params.type))}`,
        hint: `got ${describeValue(error.data)}${about ? `; ${about}` : ''}`,
      };
    case 'enum': {
      const allowed = error.params.allowedValues as unknown[];
      return {
        message: 'must be equal to one of the allowed values',
        hint:
          didYouMean(error.data, allowed) ??
          `got ${describeValue(error.data)}; allowed: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`,
      };
    }
    case 'anyOf': {
      const branches = error.params.branches as ErrorObject[][];
      const literals = branches
        .flat()
        .flatMap((e) =>
          e.keyword === 'const'
            ? [e.params.allowedValue]
            : e.keyword === 'enum'
              ? (e.params.allowedValues as unknown[])
              : [],
        );
      return {
        message: describeAlternatives(branches),
        hint: didYouMean(error.data, literals) ?? `got ${describeValue(error.data)}${about ? `; ${about}` : ''}`,
      };
    }
    case 'minItems':
      return {
        message: `must have at least ${error.params.limit} item${error.params.limit === 1 ? '' : 's'}`,
        hint: about,
      };
    case 'minLength':
      return { message: 'must not be empty', hint: about };
    default:
      return { message: error.message ?? `fails ${error.keyword}`, hint: about || undefined };
  }
}

function didYouMean(value: unknown, allowed: readonly unknown[]): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = closestMatch(
    value,
    allowed.filter((v): v is string => typeof v === 'string'),
  );
  return match ? `did you mean "${match}"?` : undefined;
}

/** `must be "none" or an object`, `must be a boolean or a string`, `must have required property 'name' or 'key'`. */
function describeAlternatives(branches: readonly ErrorObject[][]): string {
  const firsts = branches.map(
    // A wrong type says the most ("must be a string"); then a const / enum.
    (branch) =>
      branch.find((e) => e.keyword === 'type') ??
      branch.find((e) => e.keyword === 'const' || e.keyword === 'enum') ??
      branch[0],
  );
  if (firsts.length > 0 && firsts.every((e) => e?.keyword === 'required')) {
    return `must have required property ${firsts.map((e) => `'${String(e!.params.missingProperty)}'`).join(' or ')}`;
  }
  const phrases = new Set<string>();
  for (const first of firsts) {
    if (!first) continue;
    if (first.keyword === 'const') phrases.add(JSON.stringify(first.params.allowedValue));
    else if (first.keyword === 'enum') phrases.add(describeEnum(first.params.allowedValues as unknown[]));
    else if (first.keyword === 'type') phrases.add(article(String(first.params.type)));
    else if (first.keyword === 'required') phrases.add(`an object with \`${String(first.params.missingProperty)}\``);
    else phrases.add(`valid (${first.message ?? first.keyword})`);
  }
  return `must be ${phrases.size > 0 ? [...phrases].join(' or ') : 'one of the allowed shapes'}`;
}

function describeEnum(values: readonly unknown[]): string {
  return values.length <= 6
    ? `one of ${values.map((v) => JSON.stringify(v)).join(', ')}`
    : `one of the ${values.length} known values`;
}

function article(type: string): string {
  const list = type.split(',');
  return list.map((t) => (/^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`)).join(' or ');
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 37)}...` : text}`;
}

function firstSentence(text: string | undefined): string {
  if (!text) return '';
  // Stop at the first '.' or ';' that ends a sentence (not the one in "e.g.").
  const match = /^(.*?(?<!\be\.g|\bi\.e)[.;])(\s|$)/s.exec(text);
  const sentence = (match ? match[1]! : text).replace(/[.;]$/, '');
  return sentence.length > 160 ? `${sentence.slice(0, 157)}...` : sentence;
}
