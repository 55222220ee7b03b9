/**
 * What compiled storyboard modules import at run time (`vitest-adcp/runtime`).
 * Not meant for hand-written tests: use the package root for that.
 */
/** Vitest's own, for the compiled module: resolved from this package, once, not from each storyboard file's directory. */
export { describe, it, afterAll } from 'vitest';
export {
  storyboardSuite,
  loadFailureSuite,
  storyboardData,
  storyboardStored,
  type StoryboardSuite,
} from './vitest/suite.js';
