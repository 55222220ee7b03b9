/**
 * The Jest shim: what a storyboard compiled for Jest (`compile(…, { framework: 'jest' })`) calls at run time. The step
 * protocol is adapter/step-session.ts's, as under Vitest; here only Jest's side of it: the file's records for the
 * reporter (Jest has no test meta), console lines for warnings and skips, the error Jest prints.
 *
 * Where it runs: in the Jest worker's own Node realm, not in the test file's sandbox. The test environment
 * (environment.cts, which the preset names) loads this module with Node's `require` — so the engine, the MCP SDK and
 * ajv load once per worker, not once per test file (what Vitest's `isolate: false` project does for the same reason,
 * docs/architecture.md), and ESM-only code needs no Jest transform — and puts `createJestRuntime(sandbox)` on the test
 * file's global, where `vitest-adcp/jest/runtime` hands it to the compiled module. The compiled module calls Jest's
 * `describe`/`it` itself; nothing here touches them.
 */
import type { AgentStartOptions } from '../agent/agent-start.js';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { defaultCacheDir } from '../cache/location.js';
import { complianceFromEnv, runCorpus } from '../corpus.js';
import { resolveRuntimeConfig, type RuntimeConfig } from '../config.js';
import { openStoryboardRun } from '../open-run.js';
import { sanitizeOutput } from '../model/redact.js';
import type { Diagnostic, Storyboard } from '../model/storyboard.js';
import type { AdcpPlannedStep, AdcpStepMeta, AdcpStoryboardMeta } from '../model/step-meta.js';
import { StepSession, type StepFailure } from '../adapter/step-session.js';
import { storyboardInfo } from '../adapter/storyboard-info.js';
import { loadFailureText, stepErrorStack, type FailingValidation } from '../adapter/step-failure.js';

/** The preset's `adcp` option (`testEnvironmentOptions.adcp`): the run configuration, env vars as fallbacks. */
export interface JestAdcpOptions extends RuntimeConfig {
  /** Corpus version (installed in @adcp/sdk, or fetched earlier: see README > Versions), or a path to a compliance tree. Env: ADCP_COMPLIANCE. @default the version the installed @adcp/sdk pins */
  compliance?: string;
  /**
   * Start the agent for the run, as `agent.start` of `adcpStoryboards()` does: `{ command, cwd?, env?, timeoutMs?,
   * reuseExisting? }`, waited for at `agentUrl`, stopped with its whole process group when the run ends. Read by the
   * preset's global setup and teardown (start-agent.cts, stop-agent.cts) in Jest's main process, not by test files.
   */
  start?: AgentStartOptions;
}

/**
 * What the Jest contract reporter (reporter.cts) gets from a test file: the same meta Vitest carries on its tasks — each
 * planned step at collection (so a step whose test never ran is reported `not_run`), each step test's redacted record
 * with the records of the steps its settle replayed, each storyboard skipped as a whole (`no_phases`).
 */
export interface JestFileRecords {
  planned: AdcpPlannedStep[];
  steps: { adcp: AdcpStepMeta; adcpReplayed?: AdcpStepMeta[] }[];
  storyboards: AdcpStoryboardMeta[];
  /**
   * Why the file's storyboards ran against their corpus (`Corpus.choice`), as the worker resolved it: the report's
   * `run.corpus_choice`, as the Vitest plugin provides it to its reporter.
   */
  corpusChoice?: string;
}

/** The test file's globals the adapter uses: its `Error` (so the stack is source-mapped by Jest) and its console. */
interface JestSandbox {
  Error: ErrorConstructor;
  console?: Pick<Console, 'info'>;
}

/**
 * The step's error. Jest shows `message` and then the stack (no `diff` field, unlike Vitest), so the details go in the
 * message under the one-line headline; the stack's first frame is the failing validation's YAML line, which Jest
 * prints with a code frame of the YAML.
 */
class StoryboardStepError extends Error {
  expected?: unknown;
  actual?: unknown;
  constructor(headline: string, at: Error, validation?: FailingValidation, details?: string) {
    // The output sanitiser on everything Jest prints of it (control characters, CI-command line starts).
    const message = sanitizeOutput(details ? `${headline}\n${details}` : headline);
    super(message);
    this.name = 'StoryboardStepError';
    this.stack = stepErrorStack(this.name, message, at, validation);
  }
}

interface JestStoryboardSuite {
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
function jestConfigurationError(config: RuntimeConfig, env: NodeJS.ProcessEnv = process.env): string | undefined {
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
    // `start` is the global setup's (start-agent.cts); the steps read the log it names (`agentLog`).
    const { compliance, start: _start, ...given } = options;
    // A corpus that was named must exist (the test file fails with the fix).
    const corpus = runCorpus(compliance ?? complianceFromEnv(), rootDir);
    config = {
      corpusRoot: corpus?.root,
      corpusVersion: corpus?.version,
      corpusChoice: corpus?.choice,
      schemasDir: corpus?.schemasDir,
      // Compiled schema validators between runs (schemas/validator-cache.ts); `cacheDir: ''` turns it off. The Vitest
      // plugin's default (Vite's default cache directory inside a package, the OS user cache outside any): a project
      // that runs both frameworks keeps one cache.
      cacheDir: defaultCacheDir(rootDir, join('node_modules', '.vite')),
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
 *
 * @public The Jest environment (environment.cts) loads this with Node's `require`, which knip does not follow.
 */
export function createJestRuntime(
  sandbox: JestSandbox,
  options: JestAdcpOptions = {},
  rootDir: string = process.cwd(),
) {
  const config = () => runtimeConfig(options, rootDir);
  const records: JestFileRecords = { planned: [], steps: [], storyboards: [] };

  function storyboardSuite(storyboard: Storyboard, loadWarnings: readonly string[] = []): JestStoryboardSuite {
    const session = new StepSession({
      storyboard,
      info: storyboardInfo(storyboard, config()),
      openRun: () => openStoryboardRun(storyboard, config(), { loadWarnings }),
      corpusRoot: config().corpusRoot,
      configurationError: () => jestConfigurationError(config()),
      agentLog: config().agentLog,
    });
    // Jest has no per-test meta: every step is planned when the module registers its tests.
    records.planned.push(...session.plannedSteps());
    if (config().corpusChoice) records.corpusChoice = config().corpusChoice;
    /** How often each step's test ran: Jest re-runs a failed test's callback in the same module (`jest.retryTimes`). */
    const attempts = new Map<string, number>();
    return {
      timeout() {
        return session.timeout();
      },
      async step(phaseId, stepId) {
        // Captured synchronously, while the compiled module's `it` callback is on the stack, with the test file's
        // Error so Jest's source maps put that frame on the step's YAML line.
        const at = new sandbox.Error();
        const retry = attempts.get(`${phaseId}/${stepId}`) ?? 0;
        attempts.set(`${phaseId}/${stepId}`, retry + 1);
        const report = await session.step(phaseId, stepId, { retry, retryOption: 'jest.retryTimes' });
        if (report.kind === 'retry_refused') throw new StoryboardStepError(report.message, at);
        records.steps.push({
          adcp: report.meta,
          ...(report.replayed.length > 0 ? { adcpReplayed: report.replayed } : {}),
        });
        const name = `${storyboard.id}/${phaseId}/${stepId}`;
        for (const warning of report.warnings)
          sandbox.console?.info(sanitizeOutput(`vitest-adcp: ${name}: ${warning}`));
        if (report.skip !== undefined) {
          // Jest cannot skip a test once it runs (no ctx.skip(), no pending()): the test passes, and the contract's skip
          // reason is printed with it and kept in its record, so the report still says skipped.
          sandbox.console?.info(`vitest-adcp: skipped ${name} — ${report.skip}`);
          return;
        }
        if (report.failure) throw stepError(report.failure, at);
      },
      noPhases() {
        const { meta, text } = session.noPhases();
        records.storyboards.push(meta);
        sandbox.console?.info(sanitizeOutput(`vitest-adcp: skipped ${storyboard.id} — ${text}`));
      },
      async close() {
        await session.close();
      },
    };
  }

  /**
   * A failure as Jest shows it. A configuration error fails every step before calling anything: the terminal shows it
   * whole once per worker, then in one line per step.
   */
  function stepError(failure: StepFailure, at: Error): StoryboardStepError {
    if (failure.configuration) {
      const first = !configurationShown;
      configurationShown = true;
      return new StoryboardStepError(
        first
          ? failure.headline
          : `not run: vitest-adcp is not configured for Jest (${failure.headline.slice(CONFIGURATION.length).split(/\. |: /)[0]}; the fix is in the first failed step's message)`,
        at,
      );
    }
    const error = new StoryboardStepError(failure.headline, at, failure.validation, failure.details || undefined);
    if (failure.expected !== undefined) {
      error.expected = failure.expected;
      error.actual = failure.actual;
    }
    return error;
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
