/**
 * vitest-adcp: AdCP compliance storyboards as native Vitest tests.
 *
 * ```ts
 * // vitest.config.ts
 * import { defineConfig } from 'vitest/config';
 * import { adcpStoryboards } from 'vitest-adcp';
 * export default defineConfig({ plugins: [adcpStoryboards({ compliance: { storyboards: ['capability_discovery'] } })] });
 * ```
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
export { StoryboardRun, type StoryboardRunOptions } from './engine/run.js';
export { closeSharedSessions, openStoryboardRun, type OpenRunOptions } from './open-run.js';
export { loadStoryboard, loadStoryboardFile, type LoadResult } from './storyboard/load.js';
export { resolveCorpus, type Corpus } from './corpus.js';
export { listCorpus, selectCorpus, type CorpusEntry } from './storyboard/select.js';
export { McpTransport } from './transport/mcp.js';
export { A2aTransport, extractA2aResult } from './transport/a2a.js';
export { createTransport } from './transport/create.js';
export {
  createAdcpClient,
  type AdcpClient,
  type AdcpClientOptions,
  type AdcpCallOptions,
  type AdcpResponse,
  type AdcpAuth,
} from './client/client.js';
export type { Exchange } from './model/exchange.js';
export { compileStoryboard, type CompileResult } from './compile/compile.js';
export {
  redactPayload,
  filterResponseHeaders,
  REDACTED_KEY_PATTERN,
  RESPONSE_HEADER_ALLOWLIST,
} from './model/redact.js';
export type { WebhookDeliveryRecord } from './model/records.js';
export {
  WebhookReceiver,
  type WebhookReceiverOptions,
  type WebhookDelivery,
  type WebhookSink,
  type RetryPolicy,
} from './webhooks/receiver.js';
export type { WebhookOptions } from './webhooks/options.js';
