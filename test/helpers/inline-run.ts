/**
 * Runs an inline storyboard through the real engine and the real MCP (or A2A) transport
 * against a real agent URL (our fixture agent on 127.0.0.1). No test framework
 * in between: for asserting the contract records the engine produces.
 */
import { contractRules } from '../../src/model/contract-rules.js';
import { stringify } from 'yaml';
import { defaultSchemasDir } from '../../src/corpus.js';
import type { StepOutcome } from '../../src/model/records.js';
import { StoryboardRun } from '../../src/engine/run.js';
import { BUILTIN_ROLES } from '../../src/roles/index.js';
import { schemaRegistryFor } from '../../src/schemas/registry.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import type { TestKit } from '../../src/model/storyboard.js';
import { createTransport } from '../../src/transport/create.js';
import { RateLimitedTransport } from '../../src/transport/rate-limit.js';
import type { RunSettings } from '../../src/engine/run-settings.js';

export const TOKEN = 'demo-e2e-token-v1';

export interface InlineRunOptions {
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** `null`: no default credentials at all. */
  authToken?: string | null;
  testKit?: TestKit;
  /** Pause between `tasks/get` polls (the engine's default is 1000 ms). */
  pollIntervalMs?: number;
  /** Storyboard ids of the "source tree", for `requires_scenarios`. Absent: not checked. */
  knownStoryboardIds?: Iterable<string>;
  /** How to reach the agent (the URL is then the A2A endpoint). @default 'mcp' */
  protocol?: 'mcp' | 'a2a';
  /** LoadOptions.strictKeys: `false` loads a storyboard with checks or keys the format does not define. @default true */
  strictKeys?: boolean;
  /** The loader's warnings handed to the run, as the Vitest adapter hands them (StoryboardRunOptions.loadWarnings). */
  loadWarnings?: string[];
  /** The runner-output contract the run follows (a corpus's `version:`, e.g. '1.1.0'). @default the newest */
  contract?: string;
  /** RunSettings.seededState. */
  seededState?: boolean;
  /** RunSettings.runnerContracts. */
  runnerContracts?: RunSettings['runnerContracts'];
  /** RunSettings.inFlightBudgetMs. */
  inFlightBudgetMs?: number;
  /** The transport as open-run.ts makes it: a RATE_LIMITED answer waits and is sent again. @default false */
  rateLimited?: boolean;
  /** RunSettings.seedsTogether. */
  seedsTogether?: boolean;
}

export async function runInline(
  yaml: string,
  url: string,
  options: InlineRunOptions = {},
): Promise<Record<string, StepOutcome>> {
  const run = openInline(yaml, url, options);
  try {
    const outcomes = await run.runAll();
    return Object.fromEntries(outcomes.map((o) => [o.result.step_id, o]));
  } finally {
    await run.close();
  }
}

/** The engine's run of an inline storyboard, for driving it step by step (`settle`) as the Vitest adapter does. Close it. */
export function openInline(yaml: string, url: string, options: InlineRunOptions = {}): StoryboardRun {
  const loaded = loadStoryboard(yaml, '/virtual/inline.storyboard.yaml', { strictKeys: options.strictKeys !== false });
  if (!loaded.ok)
    throw new Error(loaded.diagnostics.map((d) => `${d.line}:${d.column} [${d.rule}] ${d.message}`).join('\n'));
  return new StoryboardRun(loaded.storyboard, {
    roles: BUILTIN_ROLES,
    transport: () => {
      const transport = createTransport(options.protocol ?? 'mcp', {
        url,
        maxResponseBytes: options.maxResponseBytes ?? 10 * 1024 * 1024,
      });
      return options.rateLimited ? new RateLimitedTransport(transport) : transport;
    },
    schemas: schemaRegistryFor(defaultSchemasDir()!),
    authToken: options.authToken === null ? undefined : (options.authToken ?? TOKEN),
    testKit: options.testKit,
    timeoutMs: options.timeoutMs ?? 10_000,
    ...(options.pollIntervalMs !== undefined ? { pollIntervalMs: options.pollIntervalMs } : {}),
    ...(options.knownStoryboardIds ? { knownStoryboardIds: () => new Set(options.knownStoryboardIds) } : {}),
    ...(options.loadWarnings ? { loadWarnings: options.loadWarnings } : {}),
    rules: contractRules(options.contract),
    ...(options.seededState ? { seededState: true } : {}),
    ...(options.runnerContracts ? { runnerContracts: options.runnerContracts } : {}),
    ...(options.inFlightBudgetMs ? { inFlightBudgetMs: options.inFlightBudgetMs } : {}),
    ...(options.seedsTogether ? { seedsTogether: true } : {}),
  });
}

/** A step of an inline storyboard, as the YAML would say it. */
export interface InlineStep {
  id: string;
  task: string;
  [key: string]: unknown;
}

/** A phase of an inline storyboard; other phase keys (`optional`, `skip_if`, …) as written in YAML. */
export interface InlinePhase {
  id: string;
  /** Defaults to the id. */
  title?: string;
  steps: InlineStep[];
  [key: string]: unknown;
}

/**
 * A storyboard of several phases, as YAML. `root` holds the storyboard-level
 * keys (`required_tools`, `prerequisites`, `fixtures`, `invariants`, …).
 */
export function phasedStoryboard(phases: InlinePhase[], root: Record<string, unknown> = {}): string {
  return stringify({
    id: 'inline',
    title: 'Inline',
    ...root,
    phases: phases.map(({ id, title, ...rest }) => ({ id, title: title ?? id, ...rest })),
  });
}

/** A one-phase storyboard from step snippets (YAML strings indented for a step list). */
export function storyboard(...steps: string[]): string {
  return [
    'id: inline',
    'title: Inline',
    'phases:',
    '  - id: main',
    '    title: Main',
    '    steps:',
    ...steps.map((s) => s.replace(/^/gm, '      ')),
    '',
  ].join('\n');
}
