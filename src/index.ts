/**
 * vitest-adcp: AdCP compliance storyboards as native Vitest tests.
 *
 * ```ts
 * // vitest.config.ts
 * import { defineConfig } from 'vitest/config';
 * import { adcpStoryboards } from 'vitest-adcp';
 * export default defineConfig({ plugins: [adcpStoryboards({ compliance: { storyboards: ['capability_discovery'] } })] });
 * ```
 *
 * The public API: what README.md lists under "Public API" (test/types/public-api.test.ts holds the two to each other).
 * Everything else is internal and may change in any release: the benches reach it through `internal.ts`, which
 * package.json does not export, and the tests import src/ directly.
 */
import './model/step-meta.js';
// The matchers' types on Vitest's `expect` (and Jest's `jest.Matchers`) for every file of a program that imports this
// package, the config included: `setupFiles: ['vitest-adcp/matchers']` registers them where TypeScript cannot see it.
import './matchers/vitest-types.js';
import './matchers/jest-types.js';

export { adcpStoryboards, type AdcpStoryboardsOptions } from './plugin/plugin.js';
export type { CorpusSelection } from './storyboard/select.js';
export type { RuntimeConfig } from './config.js';
export type { AdcpStepMeta } from './model/step-meta.js';
export type {
  Storyboard,
  Phase,
  Step,
  Validation,
  TestKit,
  Diagnostic,
  SourceLocation,
  StepAuth,
  Annotations,
  BranchSet,
  ContextInput,
  ContextOutput,
  Prerequisites,
  Fixtures,
  RefsEndpoint,
  CatalogBinding,
} from './model/storyboard.js';
export type {
  StepResult,
  ValidationResult,
  RequestRecord,
  ResponseRecord,
  ExtractionRecord,
  SkipResult,
  SkipReason,
  SchemaError,
  StepOutcome,
} from './model/records.js';
export { closeSharedSessions, openStoryboardRun, type OpenRunOptions } from './open-run.js';
export { loadStoryboard, loadStoryboardFile, type LoadOptions, type LoadResult } from './storyboard/load.js';
export {
  createAdcpClient,
  type AdcpClient,
  type AdcpClientOptions,
  type AdcpCallOptions,
  type AdcpResponse,
  type AdcpAuth,
} from './client/client.js';
export type { Exchange } from './model/exchange.js';
export type { WebhookDeliveryRecord } from './model/records.js';
export type { WebhookOptions } from './webhooks/options.js';
