/**
 * What compiled storyboard modules import at run time (`vitest-adcp/runtime`).
 * Not meant for hand-written tests: use the package root for that.
 */
export {
  storyboardSuite,
  loadFailureSuite,
  storyboardData,
  storyboardStored,
  type StoryboardSuite,
} from './vitest/suite.js';
