/** Storyboard loading: YAML → `Storyboard`, test kits, diagnostics. */
export type * from '../model/storyboard.js';
export { loadStoryboard, loadStoryboardFile, unwrapLoadResult, type LoadOptions, type LoadResult } from './load.js';
export { DEFAULT_STORYBOARD_BOUNDS, fileBytesOverBound, type StoryboardBounds } from './bounds.js';
export { StoryboardLoadError, formatDiagnostic, sortDiagnostics } from './diagnostics.js';
export {
  resolveTestKitPath,
  loadTestKit,
  parseTestKit,
  clearTestKitCache,
  type TestKitPathOptions,
  type LoadTestKitOptions,
  type ParseTestKitResult,
} from './test-kit.js';
export { findStoryboardFiles, isStoryboardSource } from './discover.js';
export { STORYBOARD_RULES, type StoryboardRuleId, type RuleInfo } from './rule-catalog.js';
export { levenshtein, closestMatch } from './did-you-mean.js';
