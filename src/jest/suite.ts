/**
 * The Jest adapter: what a storyboard compiled for Jest (`compile(…, { framework: 'jest' })`) calls at run time,
 * mirroring src/vitest/suite.ts over the same StoryboardRun.
 *
 * Where it runs: in the Jest worker's own Node realm, not in the test file's sandbox. The test environment
 * (environment.cts, which the preset names) loads this module with Node's `require` — so the engine, the MCP SDK and
 * ajv load once per worker, not once per test file (what Vitest's `isolate: false` project does for the same reason,
 * docs/architecture.md), and ESM-only code needs no Jest transform — and puts `createJestRuntime(sandbox)` on the test
 * file's global, where `vitest-adcp/jest/runtime` hands it to the compiled module. The compiled module calls Jest's
 * `describe`/`it` itself; nothing here touches them.
 */
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { complianceFromEnv, runCorpus } from '../corpus.js';
import { resolveRuntimeConfig, type RuntimeConfig } from '../config.js';
import type { StoryboardRun } from '../engine/run.js';
import { openStoryboardRun } from '../open-run.js';
import { runTarget } from '../report/envelope.js';
import { redactStepResult, stepKey } from '../report/record.js';
import { sanitizeOutput } from '../model/redact.js';
import type { Diagnostic, Storyboard } from '../model/storyboard.js';
import type { AdcpPlannedStep, AdcpStepMeta, StoryboardInfo } from '../model/step-meta.js';
import { ReplayedSteps } from '../adapter/replayed.js';
import {
  loadFailureText,
  noPhasesSkip,
  retryRefusal,
  skipText,
  stepErrorStack,
  stepFailureText,
  type FailingValidation,
} from '../adapter/step-failure.js';

/** The preset's `adcp` option (`testEnvironmentOptions.adcp`): the run configuration, env vars as fallbacks. */
export interface JestAdcpOptions extends RuntimeConfig {
  /** Corpus version of the installed @adcp/sdk, or a path to a compliance tree. Env: ADCP_COMPLIANCE. @default newest installed */
  compliance?: string;
}

/**
 * What the Jest contract reporter (reporter.cts) gets from a test file: the same meta Vitest carries on its tasks — each
 * planned step at collection (so a step whose test never ran is reported `not_run`), each step's redacted record.
 */
export interface JestFileRecords {
  planned: AdcpPlannedStep[];
  steps: AdcpStepMeta[];
}

/** The test file's globals the adapter uses: its `Error` (so the stack is source-mapped by Jest) and its console. */
export interface JestSandbox {
  Error: ErrorConstructor;
  console?: Pick<Console, 'info'>;
}

/**
 * The step's error. Jest shows `message` and then the stack (no `diff` field, unlike Vitest), so the details go in the
 * message under the one-line headline; the stack's first frame is the failing validation's YAML line, which Jest
 * prints with a code frame of the YAML.
 */
export class StoryboardStepError extends Error {
  expected?: unknown;
  actual?: unknown;
  constructor(headline: string, at: Error, validation?: FailingValidation, details?: string) {
    // The output sanitiser on everything Jest prints of it (control characters, CI-command line starts).
    const message = sanitizeOutput(details ? `${headline}\n\n${details}` : headline);
    super(message);
    this.name = 'StoryboardStepError';
    this.stack = stepErrorStack(this.name, message, at, validation);
  }
}

export interface JestStoryboardSuite {
  step(phaseId: string, stepId: string): Promise<void>;
  timeout(): number;
  noPhases(): void;
  close(): Promise<void>;
}

/** What tells a configuration error that the engine reported from any other step error. */
const CONFIGURATION = 'vitest-adcp cannot run the storyboards under Jest: ';

/**
 * A run configuration that cannot work, said the Jest way — the preset's `adcp` options and the environment, never
 * the Vitest plugin's `vitest.config.ts` — or undefined. Runner text, not the agent's: never fenced.
 */
export function jestConfigurationError(
  config: RuntimeConfig,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const resolved = resolveRuntimeConfig(config, env);
  if (!resolved.error) return undefined;
  if (!resolved.agentUrl) {
    return (
      `${CONFIGURATION}no agent to test. Set ADCP_AGENT_URL (e.g. ADCP_AGENT_URL=http://127.0.0.1:3000/mcp npx jest), ` +
      "or the preset's option in jest.config.js: module.exports = require('vitest-adcp/jest').createJestPreset({ adcp: { agentUrl: 'http://127.0.0.1:3000/mcp' } })"
    );
  }
  // The engine's other configuration messages name the Vitest plugin's options: name the preset's beside them.
  const vitestWords = /adcpStoryboards|vitest\.config|--allow-http|\bCLI\b/.test(resolved.error);
  return `${CONFIGURATION}${resolved.error}${vitestWords ? ". Under Jest: the preset's adcp options (createJestPreset({ adcp: { agentUrl, protocol, allowHttp, requests } }) in jest.config.js) or the same ADCP_* environment variables" : ''}`;
}

/** Per worker: whether a configuration error was shown whole already (then each further step says it in one line). */
let configurationShown = false;

/** Resolved once per worker and options: the corpus for test kits and schemas, as the Vitest plugin's fallback. */
const configs = new Map<string, RuntimeConfig>();
function runtimeConfig(options: JestAdcpOptions, rootDir: string): RuntimeConfig {
  const key = JSON.stringify([options, rootDir, process.env.ADCP_COMPLIANCE]);
  let config = configs.get(key);
  if (!config) {
    const { compliance, ...given } = options;
    // A corpus that was named must exist (the test file fails with the fix).
    const corpus = runCorpus(compliance ?? complianceFromEnv(), rootDir);
    config = {
      corpusRoot: corpus?.root,
      corpusVersion: corpus?.version,
      schemasDir: corpus?.schemasDir,
      // Compiled schema validators between runs (schemas/validator-cache.ts); `cacheDir: ''` turns it off.
      cacheDir: join(rootDir, 'node_modules', '.cache', 'vitest-adcp'),
      projectRoot: rootDir,
      ...given,
      ...(given.testKitDirs ? { testKitDirs: given.testKitDirs.map((d) => resolve(rootDir, d)) } : {}),
    };
    configs.set(key, config);
  }
  return config;
}

/**
 * The runtime one test file gets: `storyboardSuite` and `loadFailureSuite` for the compiled module, `records` for a
 * reporter, `matchers` for `vitest-adcp/matchers/jest`.
 */
export function createJestRuntime(
  sandbox: JestSandbox,
  options: JestAdcpOptions = {},
  rootDir: string = process.cwd(),
) {
  const config = () => runtimeConfig(options, rootDir);
  const records: JestFileRecords = { planned: [], steps: [] };

  function storyboardSuite(storyboard: Storyboard, loadWarnings: readonly string[] = []): JestStoryboardSuite {
    let run: StoryboardRun | undefined;
    const getRun = () => (run ??= openStoryboardRun(storyboard, config(), { loadWarnings }));
    const info: StoryboardInfo = {
      id: storyboard.id,
      title: storyboard.title,
      version: storyboard.version,
      track: storyboard.track,
      file: storyboard.file,
      ...runTarget(config()),
    };
    for (const phase of storyboard.phases)
      for (const step of phase.steps)
        records.planned.push({
          storyboard: info,
          phase_id: phase.id,
          step_id: step.id,
          ...(step.task ? { task: step.task } : {}),
        });
    const replays = new ReplayedSteps(info);
    let configError: string | undefined;
    /** How often each step's test ran: Jest re-runs a failed test's callback in the same module (`jest.retryTimes`). */
    const attempts = new Map<string, number>();
    return {
      timeout() {
        // As the Vitest adapter: above the engine's own bounds, so Jest never cuts a step the engine is still bounding.
        return getRun().worstCaseMs() + 10_000;
      },
      async step(phaseId, stepId) {
        // Captured synchronously, while the compiled module's `it` callback is on the stack, with the test file's
        // Error so Jest's source maps put that frame on the step's YAML line.
        const at = new sandbox.Error();
        const current = getRun();
        const outcome = await current.settle(phaseId, stepId);
        const retry = attempts.get(`${phaseId}/${stepId}`) ?? 0;
        attempts.set(`${phaseId}/${stepId}`, retry + 1);
        // Not re-run, on purpose (as under Vitest): a storyboard is a stateful sequence; the first verdict stands.
        if (retry > 0)
          throw new StoryboardStepError(retryRefusal(outcome, current.secrets(), retry, 'jest.retryTimes'), at);
        const configurationError = (configError ??= jestConfigurationError(config()) ?? '');
        if (configurationError && outcome.status === 'failed' && !outcome.result.request) {
          // Every step fails with it, before calling anything: the record says it the Jest way, and the terminal shows it
          // whole once per worker, then in one line per step.
          const result = redactStepResult({ ...outcome.result, error: configurationError }, current.secrets());
          records.steps.push({ id: stepKey(result), status: outcome.status, result, storyboard: info });
          const first = !configurationShown;
          configurationShown = true;
          throw new StoryboardStepError(
            first
              ? configurationError
              : `not run: vitest-adcp is not configured for Jest (${configurationError.slice(CONFIGURATION.length).split(/\. |: /)[0]}; the fix is in the first failed step's message)`,
            at,
          );
        }
        const result = redactStepResult(outcome.result, current.secrets());
        records.steps.push(
          { id: stepKey(result), status: outcome.status, result, storyboard: info },
          ...replays.take(current, phaseId, stepId, current.secrets()),
        );
        for (const warning of result.warnings ?? [])
          sandbox.console?.info(sanitizeOutput(`vitest-adcp: ${storyboard.id}/${phaseId}/${stepId}: ${warning}`));
        if (outcome.status === 'skipped') {
          // Jest cannot skip a test once it runs (no ctx.skip(), no pending()): the test passes, and the contract's skip
          // reason is printed with it and kept in its record, so the report still says skipped.
          sandbox.console?.info(`vitest-adcp: skipped ${storyboard.id}/${phaseId}/${stepId} — ${skipText(result)}`);
          return;
        }
        if (outcome.status === 'failed') {
          const failure = stepFailureText(result, current.secrets());
          const error = new StoryboardStepError(failure.headline, at, failure.validation, failure.details);
          if (failure.expected !== undefined) {
            error.expected = failure.expected;
            error.actual = failure.actual;
          }
          throw error;
        }
      },
      noPhases() {
        const skip = noPhasesSkip(storyboard);
        sandbox.console?.info(sanitizeOutput(`vitest-adcp: skipped ${storyboard.id} — ${skip.reason}: ${skip.detail}`));
      },
      async close() {
        await run?.close();
      },
    };
  }

  function loadFailureSuite(diagnostics: Diagnostic[]) {
    return {
      fail(): never {
        const at = new sandbox.Error();
        const text = loadFailureText(diagnostics);
        throw new StoryboardStepError(text.headline, at, undefined, text.details);
      },
    };
  }

  /** The framework-free matchers (src/matchers/matchers.ts), loaded on first use, for `vitest-adcp/matchers/jest`. */
  const matchers = () =>
    (createRequire(import.meta.url)('../matchers/matchers.js') as { adcpMatchers: Record<string, unknown> })
      .adcpMatchers;

  return { storyboardSuite, loadFailureSuite, records, matchers };
}

export type JestRuntime = ReturnType<typeof createJestRuntime>;
