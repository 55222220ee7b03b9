/**
 * The AdCP JSON Schema registry: the draft-07 schemas that `@adcp/sdk` ships in
 * `dist/lib/schemas-data/<major.minor>/`, served from one ajv instance per
 * worker. Nothing is read up front but the file list and the manifest: a schema
 * is parsed when a step first names it, added to ajv with the schemas its
 * `$ref`s reach, and compiled on first validation, then cached — so a run pays
 * only for the schemas its storyboards use. (The directory holds ~580 files,
 * 12 MB, most of them `bundled/` copies no storyboard names; parsing and adding
 * them all cost every worker 200–300 ms before its first step.)
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { createRequire } from 'node:module';
import type AjvModule from 'ajv';
import type { AnySchema, ErrorObject, ValidateFunction } from 'ajv';
import type addFormatsModule from 'ajv-formats';
import type standaloneModule from 'ajv/dist/standalone/index.js';
import type { SchemaError } from '../model/records.js';
import { withoutAnnotations } from './annotations.js';
import { ValidatorCache } from './validator-cache.js';

const localRequire = createRequire(import.meta.url);
const AJV_VERSION = (localRequire('ajv/package.json') as { version: string }).version;
/**
 * `code.optimize: false`: ajv's optimiser passes halve the time to compile the large AdCP response schemas, and make
 * no difference a step can measure to the validation itself. `code.source` and `code.formats` let a compiled validator
 * be written out as module code (validator-cache.ts); the formats are ajv-formats' full set, as `addFormats` adds.
 */
export const AJV_OPTIONS = {
  strict: false,
  allErrors: true,
  validateSchema: false,
  logger: false,
  code: { optimize: false, source: true },
} as const;
const FORMATS_CODE = 'require("ajv-formats/dist/formats").fullFormats';

interface AjvKit {
  Ajv: typeof AjvModule.default;
  MissingRefError: typeof AjvModule.MissingRefError;
  addFormats: typeof addFormatsModule.default;
  standaloneCode: typeof standaloneModule.default;
  formats: ReturnType<typeof AjvModule._>;
}
let ajvKit: AjvKit | undefined;

/**
 * ajv itself, required on the first compile: a worker whose validators all come from the cache never loads it (some
 * seventy files). They are CommonJS with `exports.default`, hence the `?? module` fallbacks.
 */
function ajv(): AjvKit {
  if (!ajvKit) {
    const core = localRequire('ajv') as typeof AjvModule & { default?: typeof AjvModule.default };
    const formats = localRequire('ajv-formats') as typeof addFormatsModule & {
      default?: typeof addFormatsModule.default;
    };
    const standalone = localRequire('ajv/dist/standalone/index.js') as typeof standaloneModule & {
      default?: typeof standaloneModule.default;
    };
    ajvKit = {
      Ajv: core.default ?? (core as unknown as typeof AjvModule.default),
      MissingRefError: core.MissingRefError,
      addFormats: formats.default ?? (formats as unknown as typeof addFormatsModule.default),
      standaloneCode: standalone.default ?? (standalone as unknown as typeof standaloneModule.default),
      formats: core._([FORMATS_CODE] as unknown as TemplateStringsArray),
    };
  }
  return ajvKit;
}

/** Where `schema_url` points: the public origin that serves `/schemas/<version>/...`. */
const SCHEMA_URL_ORIGIN = 'https://adcontextprotocol.org';

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
  private ajvInstance: InstanceType<typeof AjvModule.default> | undefined;
  /** Every `.json` file under the directory: relative path (e.g. `protocol/x.json`) → absolute path (see `files`). */
  private fileList: Map<string, string> | undefined;
  /** The manifest's tools and version (see `manifest`). */
  private manifestRead: { tools: Record<string, ManifestTool>; version: string | undefined } | undefined;
  /** Parsed files: relative path → the schema, or null for a file that is not a schema (no `$id`, not JSON). */
  private readonly parsed = new Map<string, LoadedSchema | null>();
  /** resolveRef's answers, by ref as given. */
  private readonly resolved = new Map<string, string | undefined>();
  /** Relative paths whose schema (and the schemas its refs reach) ajv has. */
  private readonly added = new Set<string>();
  private readonly validators = new Map<string, ValidateFunction>();
  private loadedAll = false;
  private readonly cache: ValidatorCache | undefined;

  /** The directory's own entries, read by the constructor: a directory that cannot be read fails there. */
  private readonly top: Dirent[];

  /**
   * `cacheDir`: where compiled validators are kept between runs (validator-cache.ts); none, no cache. Reads only the
   * directory's own entries: every run opens one (open-run.ts), and not every run validates (a run whose steps all
   * skip, a worker's run of a file the run host then answers for) — the tree below and the manifest are read on first
   * use.
   */
  constructor(
    readonly dir: string,
    cacheDir?: string,
  ) {
    this.cache = cacheDir
      ? new ValidatorCache(cacheDir, `ajv ${AJV_VERSION} ${JSON.stringify(AJV_OPTIONS)} formats: ${FORMATS_CODE}`)
      : undefined;
    this.top = readdirSync(dir, { withFileTypes: true });
  }

  /** The AdCP version the manifest names. */
  get version(): string | undefined {
    return this.manifest.version;
  }

  private get tools(): Record<string, ManifestTool> {
    return this.manifest.tools;
  }

  private get manifest(): { tools: Record<string, ManifestTool>; version: string | undefined } {
    if (!this.manifestRead) {
      const manifest = readJson(join(this.dir, 'manifest.json'));
      this.manifestRead = { tools: manifest?.tools ?? {}, version: manifest?.adcp_version };
    }
    return this.manifestRead;
  }

  private get files(): Map<string, string> {
    if (!this.fileList) {
      this.fileList = new Map();
      for (const file of listJsonFiles(this.dir, this.top))
        this.fileList.set(relative(this.dir, file).split(sep).join('/'), file);
    }
    return this.fileList;
  }

  /** The response schema the manifest declares for a task, e.g. `protocol/get-adcp-capabilities-response.json`. */
  responseSchemaFor(task: string): string | undefined {
    return this.tools[task]?.response_schema;
  }

  /** The tasks the manifest declares (empty for a schema directory without a manifest). */
  taskNames(): string[] {
    return Object.keys(this.tools);
  }

  /** The request schema the manifest declares for a task, e.g. `media-buy/create-media-buy-request.json`. */
  requestSchemaFor(task: string): string | undefined {
    return this.tools[task]?.request_schema;
  }

  /**
   * Whether a task's request schema lists `idempotency_key` as required — the
   * spec's marker of the idempotency mechanism (storyboard-schema.yaml >
   * "Relationship to idempotency_key"), and so of the tasks a runner adds a
   * key to. Read from the schema itself: nothing is compiled for it.
   */
  requiresIdempotencyKey(task: string): boolean {
    const ref = this.requestSchemaFor(task);
    const path = ref ? this.resolveRef(ref) : undefined;
    const required = path ? (this.load(path)?.schema as { required?: unknown } | undefined)?.required : undefined;
    return Array.isArray(required) && required.includes('idempotency_key');
  }

  /** The top-level properties a task's request schema declares (read from the schema itself; nothing compiled). */
  requestProperties(task: string): string[] {
    const ref = this.requestSchemaFor(task);
    const path = ref ? this.resolveRef(ref) : undefined;
    const properties = path ? (this.load(path)?.schema as { properties?: unknown } | undefined)?.properties : undefined;
    return properties && typeof properties === 'object' ? Object.keys(properties) : [];
  }

  identify(ref: string): SchemaIdentity {
    const path = this.resolveRef(ref);
    const id = path ? this.load(path)?.id : undefined;
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
   * `media-buy/build-creative-response.json`), the one schema of that name
   * outside the `bundled/` copies.
   */
  resolveRef(ref: string): string | undefined {
    // Asked on every step that validates: the by-name search below scans every file path, so answers are kept.
    if (this.resolved.has(ref)) return this.resolved.get(ref);
    const path = normaliseRef(ref);
    let resolved: string | undefined = path;
    if (!this.load(path)) {
      const name = path.split('/').at(-1)!;
      const candidates = [...this.files.keys()].filter(
        (p) => !p.startsWith('bundled/') && p.split('/').at(-1) === name && this.load(p),
      );
      resolved = candidates.length === 1 ? candidates[0] : undefined;
    }
    this.resolved.set(ref, resolved);
    return resolved;
  }

  /**
   * The `default` a schema declares for the property at a dotted path (`media_buy.supports_proposals`), following
   * `properties` and `$ref`s (other files, `#/definitions/…`), and the object branches of `allOf` / `oneOf` / `anyOf`;
   * undefined when no schema on the way declares one. Read from the parsed files: nothing is compiled.
   */
  defaultAt(ref: string, path: string): unknown {
    const start = this.resolveRef(ref);
    const loaded = start ? this.load(start) : null;
    if (!loaded) return undefined;
    let nodes: { node: unknown; file: LoadedSchema }[] = [{ node: loaded.schema, file: loaded }];
    for (const key of path.split('.')) {
      nodes = nodes
        .flatMap(({ node, file }) => this.branches(node, file, 0))
        .flatMap(({ node, file }) => {
          const props = (node as { properties?: Record<string, unknown> }).properties;
          return props && Object.hasOwn(props, key) ? [{ node: props[key], file }] : [];
        });
      if (nodes.length === 0) return undefined;
    }
    for (const candidate of nodes.flatMap(({ node, file }) => this.branches(node, file, 0)))
      if (Object.hasOwn(candidate.node as object, 'default')) return (candidate.node as { default: unknown }).default;
    return undefined;
  }

  /** A schema node with its `$ref` followed and its `allOf` / `oneOf` / `anyOf` branches spread, bounded in depth. */
  private branches(node: unknown, file: LoadedSchema, depth: number): { node: object; file: LoadedSchema }[] {
    if (depth > 16 || node === null || typeof node !== 'object' || Array.isArray(node)) return [];
    const out: { node: object; file: LoadedSchema }[] = [{ node, file }];
    const record = node as Record<string, unknown>;
    if (typeof record.$ref === 'string') {
      const [target, fragment] = record.$ref.split('#');
      let next: LoadedSchema | null = file;
      if (target) {
        const path = new URL(target, `https://schemas.invalid${file.id}`).pathname;
        next = this.load(normaliseRef(path));
      }
      let inner: unknown = next?.schema;
      for (const part of (fragment ?? '').split('/').filter(Boolean))
        inner = (inner as Record<string, unknown>)?.[part];
      if (next) out.push(...this.branches(inner, next, depth + 1));
    }
    for (const key of ['allOf', 'oneOf', 'anyOf'])
      if (Array.isArray(record[key])) for (const b of record[key]) out.push(...this.branches(b, file, depth + 1));
    return out;
  }

  validate(ref: string, data: unknown): SchemaVerdict {
    const identity = this.identify(ref);
    let validator = this.validators.get(identity.schema_id);
    if (!validator) {
      validator = this.compile(this.resolveRef(ref)!, identity.schema_id);
      this.validators.set(identity.schema_id, validator);
    }
    const valid = validator(data) as boolean;
    return { ...identity, valid, errors: valid ? [] : (validator.errors ?? []).map(toSchemaError) };
  }

  /** The ajv instance, made on the first compile (see ajv()). */
  private get ajv(): InstanceType<typeof AjvModule.default> {
    if (!this.ajvInstance) {
      const { Ajv, addFormats, formats } = ajv();
      this.ajvInstance = new Ajv({ ...AJV_OPTIONS, code: { ...AJV_OPTIONS.code, formats } });
      addFormats(this.ajvInstance);
    }
    return this.ajvInstance;
  }

  private compile(path: string, id: string): ValidateFunction {
    const reached = this.reach(path);
    const key = this.cache?.key(
      id,
      reached.map((p) => ({ path: p, digest: this.load(p)!.digest })),
    );
    const cached = key ? this.cache!.load(key) : undefined;
    if (cached) return cached;
    for (const p of reached) if (!this.added.has(p)) this.add(p, this.load(p)!);
    try {
      const validator = this.ajv.getSchema(id);
      if (validator) {
        flattenSources(validator);
        if (key) this.keep(key, validator);
        return validator;
      }
    } catch (error) {
      // A ref this registry did not follow (an `$id` that is not the file's path, say): add every schema, as ajv
      // would have needed from the start, and compile again (not cached: the key would not cover what it used).
      if (!(error instanceof ajv().MissingRefError) || this.loadedAll) throw error;
    }
    this.addAll();
    const validator = this.ajv.getSchema(id);
    if (!validator) throw new SchemaNotFoundError(path, this.dir);
    return validator;
  }

  /** Writes a compiled validator to the cache; one ajv cannot write out as code is used all the same, just not kept. */
  private keep(key: string, validator: ValidateFunction): void {
    let code: string;
    try {
      code = ajv().standaloneCode(this.ajv, validator);
    } catch {
      return;
    }
    this.cache!.store(key, code);
  }

  /** Parses a file once; null when it is missing, not JSON, or has no `$id`. */
  private load(path: string): LoadedSchema | null {
    let loaded = this.parsed.get(path);
    if (loaded !== undefined) return loaded;
    const file = this.files.get(path);
    const text = file ? readText(file) : undefined;
    const schema = text === undefined ? undefined : parseJson(text);
    loaded =
      schema && typeof schema === 'object' && typeof schema.$id === 'string'
        ? { id: schema.$id, schema, digest: createHash('sha256').update(text!).digest('hex') }
        : null;
    this.parsed.set(path, loaded);
    return loaded;
  }

  /** A schema and every schema its `$ref`s reach, as paths. */
  private reach(path: string): string[] {
    const reached = new Set<string>();
    const pending = [path];
    while (pending.length > 0) {
      const next = pending.pop()!;
      if (reached.has(next)) continue;
      const loaded = this.load(next);
      if (!loaded) continue;
      reached.add(next);
      loaded.targets ??= refTargets(next, loaded);
      pending.push(...loaded.targets);
    }
    return [...reached];
  }

  private addAll(): void {
    for (const path of this.files.keys()) {
      const loaded = this.load(path);
      if (loaded && !this.added.has(path)) this.add(path, loaded);
    }
    this.loadedAll = true;
  }

  private add(path: string, loaded: LoadedSchema): void {
    this.added.add(path);
    // Two files may carry one `$id` (a copy): the first one added serves it, as before.
    // Without its prose (annotations.ts): less code to compile, keep in memory and read back from the cache.
    if (!(this.ajv.schemas as Record<string, unknown>)[loaded.id])
      this.ajv.addSchema(withoutAnnotations(loaded.schema) as AnySchema, loaded.id);
  }
}

/**
 * Makes the code each validator keeps (`source.validateCode`, which `code.source` keeps for the cache's standalone
 * code) one flat string, here and in every validator it calls. ajv builds it by concatenation: a tree of some 800,000
 * string pieces over a 3.1.15 run's validators, 26.7 MB of tree for ~7 MB of text, held as long as the validators
 * (issue 32: a first run's peak). Reading a character flattens a string in place; the pieces are then garbage.
 */
export function flattenSources(validator: ValidateFunction, seen = new Set<unknown>()): void {
  const source = validator.source;
  if (!source || seen.has(validator)) return;
  seen.add(validator);
  source.validateCode.charCodeAt(0);
  for (const names of Object.values(source.scopeValues))
    for (const name of names ?? []) {
      const ref = name.value?.ref;
      if (typeof ref === 'function') flattenSources(ref as ValidateFunction, seen);
    }
}

interface LoadedSchema {
  id: string;
  schema: Record<string, unknown>;
  /** SHA-256 of the file's text, for the validator cache's key. */
  digest: string;
  /** The paths its `$ref`s name (refTargets), worked out once. */
  targets?: string[];
}

/** The paths of the schemas a schema's `$ref`s name, by `$id`, which the corpus keeps equal to the path. */
function refTargets(path: string, loaded: LoadedSchema): string[] {
  // `/schemas/3.0.6/` for `/schemas/3.0.6/core/product.json` at `core/product.json`.
  const root = loaded.id.endsWith(path) ? loaded.id.slice(0, loaded.id.length - path.length) : undefined;
  if (root === undefined) return [];
  const targets: string[] = [];
  for (const ref of refsIn(loaded.schema)) {
    const target = new URL(ref, `https://schemas.invalid${loaded.id}`).pathname;
    if (target.startsWith(root)) targets.push(target.slice(root.length));
  }
  return targets;
}

/** Every `$ref` string in a schema, at any depth (fragment-only refs stay inside the schema: not listed). */
function refsIn(schema: unknown): string[] {
  const refs: string[] = [];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
    } else if (node && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') {
          if (!value.startsWith('#')) refs.push(value);
        } else walk(value);
      }
    }
  };
  walk(schema);
  return refs;
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

/** Every `.json` file under `dir`, symbolic links followed (a stat only for them: a schema tree holds ~700 files). */
function listJsonFiles(dir: string, entries: Dirent[] = readdirSync(dir, { withFileTypes: true })): string[] {
  const out: string[] = [];
  for (const entry of entries) {
    const full = join(dir, entry.name);
    const directory = entry.isSymbolicLink() ? statSync(full).isDirectory() : entry.isDirectory();
    if (directory) out.push(...listJsonFiles(full));
    else if (entry.name.endsWith('.json')) out.push(full);
  }
  return out;
}

/** A JSON file's content; undefined when it cannot be read or parsed. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- schema and manifest JSON, read by callers that know its shape
function readJson(file: string): any {
  const text = readText(file);
  return text === undefined ? undefined : parseJson(text);
}

/** A text file's content; undefined when it cannot be read. */
export function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- as readJson
function parseJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const registries = new Map<string, SchemaRegistry>();

/** One registry per schema directory (and cache directory) per process, i.e. per Vitest worker. */
export function schemaRegistryFor(dir: string, cacheDir?: string): SchemaRegistry {
  const key = `${dir}\0${cacheDir ?? ''}`;
  let registry = registries.get(key);
  if (!registry) {
    registry = new SchemaRegistry(dir, cacheDir);
    registries.set(key, registry);
  }
  return registry;
}
