/**
 * What the loader knows of AdCP to check a step's `task` and `sample_request`:
 *
 * - the AdCP tasks, from the installed schemas: the `tools` of
 *   `schemas-data/<major.minor>/manifest.json` (each with its request schema), or — a schema directory without a
 *   manifest — every `<task-with-dashes>-request.json` outside `bundled/`;
 * - the runner's own tasks: those storyboard-schema.yaml defines (`# task: expect_webhook` …, read from the compliance
 *   tree) and those the engine handles itself (RUNNER_TASKS below).
 *
 * Which schema directory: the one the caller names (LoadOptions.schemasDir), else — when the caller names a compliance
 * tree (`corpusRoot`, as the plugin and the Jest transformer do) — the one of its version (`index.json` →
 * `@adcp/sdk/dist/lib/schemas-data/<major.minor>`), else the newest installed. Neither named: none (a storyboard
 * loaded on its own, e.g. built by a test to exercise the runner, is not held to an AdCP version). Each is read once
 * per process.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { corpusSchemasDir } from '../corpus.js';
import { REQUEST_SIGNING_PROBE_TASK } from '../model/runner-tasks.js';
import { readText, schemaRegistryFor, type SchemaRegistry } from '../schemas/registry.js';

/**
 * Tasks the engine answers itself, never sent to the agent as written: `assert_contribution` (engine/run.ts), the
 * webhook assertions (roles/webhook-receiver/webhooks.ts WEBHOOK_TASKS), the OAuth probes (transport/probe.ts PROBE_TASKS), the
 * synthesized signed-request vectors and the substitution observer. Not imported from those modules: they bring the
 * webhook receiver, the signing stack and the HTTP transport into the loader (Vite's main process, the Jest
 * transformer); test/storyboard/tasks.test.ts keeps this list a superset of theirs.
 */
export const RUNNER_TASKS: ReadonlySet<string> = new Set([
  'assert_contribution',
  'expect_webhook',
  'expect_webhook_retry_keys_stable',
  'expect_webhook_signature_valid',
  'expect_substitution_safe',
  'protected_resource_metadata',
  'oauth_auth_server_metadata',
  REQUEST_SIGNING_PROBE_TASK,
  // AdCP 3.1 (roles/brand-jwks, roles/rate-limit-trip; replay_webhook_vector: engine/gate.ts runnerOnlyTaskSkip).
  'fetch_brand_jwks',
  'assert_jwks_purpose',
  'expect_rate_limit_not_replayed',
  'replay_webhook_vector',
]);

export interface AdcpKnowledge {
  /** The schema directory read, if one was found. */
  schemasDir: string | undefined;
  /** AdCP tasks (empty when no schemas are installed: then task names are not checked). */
  adcpTasks: ReadonlySet<string>;
  /** The runner's own tasks. */
  runnerTasks: ReadonlySet<string>;
  /** The registry of `schemasDir`, for request-schema validation. */
  schemas: SchemaRegistry | undefined;
  /** The request schema of an AdCP task (relative to the schema directory). */
  requestSchemaFor(task: string): string | undefined;
}

const knowledge = new Map<string, AdcpKnowledge>();

/** `schemasDir: false`, or neither it nor `corpusRoot` given: no AdCP tasks known (no task or sample_request checks). */
export function adcpKnowledge(options: {
  schemasDir?: string | false;
  corpusRoot?: string;
  schemaCacheDir?: string;
}): AdcpKnowledge {
  const key = `${options.schemasDir === false ? '\0none' : (options.schemasDir ?? '')}\0${options.corpusRoot ?? ''}\0${options.schemaCacheDir ?? ''}`;
  let known = knowledge.get(key);
  if (!known) {
    const dir =
      options.schemasDir === false
        ? undefined
        : (options.schemasDir ?? (options.corpusRoot ? schemasDirForCorpus(options.corpusRoot) : undefined));
    known = build(dir, options.corpusRoot, options.schemaCacheDir);
    knowledge.set(key, known);
  }
  return known;
}

function build(dir: string | undefined, corpusRoot: string | undefined, cacheDir: string | undefined): AdcpKnowledge {
  const runnerTasks = new Set([...RUNNER_TASKS, ...formatDefinedTasks(corpusRoot)]);
  if (!dir || !existsSync(dir)) {
    return {
      schemasDir: undefined,
      adcpTasks: new Set(),
      runnerTasks,
      schemas: undefined,
      requestSchemaFor: () => undefined,
    };
  }
  const schemas = schemaRegistryFor(dir, cacheDir);
  const declared = schemas.taskNames();
  if (declared.length > 0)
    return {
      schemasDir: dir,
      adcpTasks: new Set(declared),
      runnerTasks,
      schemas,
      requestSchemaFor: (task) => schemas.requestSchemaFor(task),
    };
  // No manifest: every `<task-with-dashes>-request.json`.
  const requests = new Map<string, string>();
  for (const file of requestFiles(dir, '')) {
    const name = file
      .split('/')
      .at(-1)!
      .replace(/-request\.json$/, '')
      .replace(/-/g, '_');
    if (!requests.has(name)) requests.set(name, file);
  }
  return {
    schemasDir: dir,
    adcpTasks: new Set(requests.keys()),
    runnerTasks,
    schemas,
    requestSchemaFor: (task) => requests.get(task),
  };
}

/** `<folder>/<name>-request.json` outside `bundled/`, relative to `dir`. */
function requestFiles(dir: string, under: string): string[] {
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(join(dir, under));
  } catch {
    return out;
  }
  for (const name of names) {
    const rel = under ? `${under}/${name}` : name;
    if (rel === 'bundled') continue;
    if (statSync(join(dir, rel)).isDirectory()) out.push(...requestFiles(dir, rel));
    else if (name.endsWith('-request.json')) out.push(rel);
  }
  return out;
}

/** The tasks storyboard-schema.yaml defines for the runner (`# task: expect_webhook`, its `- task: assert_contribution`). */
function formatDefinedTasks(corpusRoot: string | undefined): string[] {
  const text = corpusRoot ? readText(join(corpusRoot, 'universal', 'storyboard-schema.yaml')) : undefined;
  if (!text) return [];
  // The format's own definitions: `# task: <name>` at the start of a comment line, alone on it. The example phases
  // under "Branch sets" also write AdCP tasks that way (`task: create_media_buy`): harmless, they are known anyway.
  return [...text.matchAll(/^#\s+(?:-\s+)?task:\s+([a-z][a-z0-9_]*)\s*$/gm)].map((m) => m[1]!);
}

/**
 * The schema directory of a compliance tree's AdCP version (corpus.ts corpusSchemasDir); none of that version: no
 * task and sample_request checks rather than another version's schemas.
 */
function schemasDirForCorpus(corpusRoot: string): string | undefined {
  return corpusSchemasDir(corpusRoot);
}
