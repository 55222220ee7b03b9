/** Storyboard loading: YAML → `Storyboard`, test kits, diagnostics. */
export type * from '../model/storyboard.js';
export { loadStoryboard, loadStoryboardFile, unwrapLoadResult, type LoadOptions, type LoadResult } from './load.js';
export { StoryboardLoadError, formatDiagnostic } from './diagnostics.js';
export { resolveTestKitPath, loadTestKit, parseTestKit, clearTestKitCache } from './test-kit.js';
export { findStoryboardFiles, isStoryboardSource } from './discover.js';
export { STORYBOARD_RULES } from './rule-catalog.js';
