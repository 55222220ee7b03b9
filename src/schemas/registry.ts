/**
 * The AdCP JSON Schema registry: the draft-07 schemas that `@adcp/sdk` ships in
 * `dist/lib/schemas-data/<major.minor>/`, loaded into one ajv instance per
 * worker. Schemas are added once (cheap) and compiled on first use (the
 * expensive part), then cached by ajv — so a storyboard run compiles each
 * response schema at most once per worker.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import AjvModule from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { SchemaError } from '../engine/records.js';

// ajv and ajv-formats are CommonJS with `exports.default`; under NodeNext the
// default import is the module object.
const Ajv = ((AjvModule as any).default ?? AjvModule) as typeof AjvModule.default;
const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as typeof addFormatsModule.default;

/** Where `schema_url` points: the public origin that serves `/schemas/<version>/...`. */
export const SCHEMA_URL_ORIGIN = 'https://adcontextprotocol.org';

export interface SchemaIdentity {
  /** The `$id` of the schema applied, e.g. `/schemas/3.0.6/protocol/get-adcp-capabilities-response.json`. */
  schema_id: string;
  /** A URL the implementor can fetch to re-validate locally. */
  schema_url: string;
}

export interface SchemaVerdict extends SchemaIdentity {
  valid: boolean;
  errors: SchemaError[];
}

export class SchemaNotFoundError extends Error {
  constructor(ref: string, dir: string) {
    super(
      `no AdCP schema "${ref}" in ${dir}. Check the step's response_schema_ref (paths are relative to the schema root, e.g. "protocol/get-adcp-capabilities-response.json"), or install the @adcp/sdk version that matches your corpus.`,
    );
    this.name = 'SchemaNotFoundError';
  }
}

interface ManifestTool {
  request_schema?: string;
  response_schema?: string;
}

export class SchemaRegistry {
  private readonly ajv: InstanceType<typeof Ajv>;
  /** Relative path (e.g. `protocol/x.json`) → `$id`. */
  private readonly idsByPath = new Map<string, string>();
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly tools: Record<string, ManifestTool>;
  readonly version: string | undefined;

  constructor(readonly dir: string) {
    this.ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false, logger: false });
    addFormats(this.ajv);
    for (const file of listJsonFiles(dir)) {
      const rel = relative(dir, file).split(sep).join('/');
      let schema: any;
      try {
        schema = JSON.parse(readFileSync(file, 'utf8'));
      } catch {
        continue; // not a schema; the registry only serves well-formed files
      }
      if (!schema || typeof schema !== 'object' || typeof schema.$id !== 'string') continue;
      this.idsByPath.set(rel, schema.$id);
      if (!this.ajv.getSchema(schema.$id)) this.ajv.addSchema(schema, schema.$id);
    }
    const manifest = readJson(join(dir, 'manifest.json'));
    this.tools = manifest?.tools ?? {};
    this.version = manifest?.adcp_version;
  }

  /** The response schema the manifest declares for a task, e.g. `protocol/get-adcp-capabilities-response.json`. */
  responseSchemaFor(task: string): string | undefined {
    return this.tools[task]?.response_schema;
  }

  /** The request schema the manifest declares for a task, e.g. `media-buy/create-media-buy-request.json`. */
  requestSchemaFor(task: string): string | undefined {
    return this.tools[task]?.request_schema;
  }

  /**
   * Whether a task's request schema lists `idempotency_key` as required — the
   * spec's marker of the idempotency mechanism (storyboard-schema.yaml >
   * "Relationship to idempotency_key"), and so of the tasks a runner adds a
   * key to.
   */
  requiresIdempotencyKey(task: string): boolean {
    const ref = this.requestSchemaFor(task);
    const path = ref ? this.resolveRef(ref) : undefined;
    const id = path ? this.idsByPath.get(path) : undefined;
    const schema = id ? (this.ajv.getSchema(id)?.schema as { required?: unknown } | undefined) : undefined;
    return Array.isArray(schema?.required) && schema.required.includes('idempotency_key');
  }

  identify(ref: string): SchemaIdentity {
    const id = this.idsByPath.get(this.resolveRef(ref) ?? '');
    if (!id) throw new SchemaNotFoundError(ref, this.dir);
    return { schema_id: id, schema_url: SCHEMA_URL_ORIGIN + id };
  }

  /**
   * The identity a ref would have if the schema existed: what a failed
   * `response_schema` validation still reports as `schema_id`/`schema_url`, so
   * the implementor sees which artifact was asked for.
   */
  presumedIdentity(ref: string): SchemaIdentity {
    const id = `/schemas/${this.version ?? 'latest'}/${normaliseRef(ref)}`;
    return { schema_id: id, schema_url: SCHEMA_URL_ORIGIN + id };
  }

  /**
   * A storyboard's schema ref → the relative path of the file that serves it.
   * Exact path first; then, because storyboards name some schemas by the
   * domain that uses them rather than the folder that ships them (e.g.
   * `creative/build-creative-response.json`, shipped as
   * `media-buy/build-creative-response.json`), the one file of that name
   * outside the `bundled/` copies.
   */
  resolveRef(ref: string): string | undefined {
    const path = normaliseRef(ref);
    if (this.idsByPath.has(path)) return path;
    const name = path.split('/').at(-1)!;
    const candidates = [...this.idsByPath.keys()].filter((p) => !p.startsWith('bundled/') && p.split('/').at(-1) === name);
    return candidates.length === 1 ? candidates[0] : undefined;
  }

  validate(ref: string, data: unknown): SchemaVerdict {
    const identity = this.identify(ref);
    let validator = this.validators.get(identity.schema_id);
    if (!validator) {
      validator = this.ajv.getSchema(identity.schema_id);
      if (!validator) throw new SchemaNotFoundError(ref, this.dir);
      this.validators.set(identity.schema_id, validator);
    }
    const valid = validator(data) as boolean;
    return { ...identity, valid, errors: valid ? [] : (validator.errors ?? []).map(toSchemaError) };
  }
}

function toSchemaError(error: ErrorObject): SchemaError {
  return {
    instance_path: error.instancePath,
    schema_path: error.schemaPath,
    keyword: error.keyword,
    message: error.message ?? error.keyword,
  };
}

function normaliseRef(ref: string): string {
  return ref.replace(/^\/+/, '').replace(/^schemas\/[^/]+\//, '');
}

function listJsonFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listJsonFiles(full));
    else if (name.endsWith('.json')) out.push(full);
  }
  return out;
}

function readJson(file: string): any {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

const registries = new Map<string, SchemaRegistry>();

/** One registry per schema directory per process (i.e. per Vitest worker). */
export function schemaRegistryFor(dir: string): SchemaRegistry {
  let registry = registries.get(dir);
  if (!registry) {
    registry = new SchemaRegistry(dir);
    registries.set(dir, registry);
  }
  return registry;
}
