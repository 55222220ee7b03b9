/**
 * Runs an inline storyboard through the real engine and the real MCP transport
 * against a real agent URL (our fixture agent on 127.0.0.1). No test framework
 * in between: for asserting the contract records the engine produces.
 */
import { defaultSchemasDir } from '../../src/corpus.js';
import type { StepOutcome } from '../../src/engine/records.js';
import { StoryboardRun } from '../../src/engine/run.js';
import { schemaRegistryFor } from '../../src/schemas/registry.js';
import { loadStoryboard } from '../../src/storyboard/load.js';
import type { TestKit } from '../../src/storyboard/types.js';
import { McpTransport } from '../../src/transport/mcp.js';

export const TOKEN = 'demo-e2e-token-v1';

export async function runInline(
  yaml: string,
  url: string,
  options: { timeoutMs?: number; maxResponseBytes?: number; authToken?: string | null; testKit?: TestKit } = {},
): Promise<Record<string, StepOutcome>> {
  const loaded = loadStoryboard(yaml, '/virtual/inline.storyboard.yaml');
  if (!loaded.ok) throw new Error(loaded.diagnostics.map((d) => `${d.line}:${d.column} [${d.rule}] ${d.message}`).join('\n'));
  const run = new StoryboardRun(loaded.storyboard, {
    transport: () => new McpTransport({ url, maxResponseBytes: options.maxResponseBytes ?? 10 * 1024 * 1024 }),
    schemas: schemaRegistryFor(defaultSchemasDir()!),
    authToken: options.authToken === null ? undefined : (options.authToken ?? TOKEN),
    testKit: options.testKit,
    timeoutMs: options.timeoutMs ?? 10_000,
  });
  try {
    const outcomes = await run.runAll();
    return Object.fromEntries(outcomes.map((o) => [o.result.step_id, o]));
  } finally {
    await run.close();
  }
}

/** A one-phase storyboard from step snippets (YAML strings indented for a step list). */
export function storyboard(...steps: string[]): string {
  return ['id: inline', 'title: Inline', 'phases:', '  - id: main', '    title: Main', '    steps:', ...steps.map((s) => s.replace(/^/gm, '      ')), ''].join('\n');
}
