/**
 * Module types for storyboard imports in TypeScript tests:
 *   /// <reference types="vitest-adcp/client" />
 *   import sb from './flow.storyboard.yaml'; // sb: Storyboard
 */
declare module '*.storyboard.yaml' {
  const storyboard: import('vitest-adcp').Storyboard;
  export default storyboard;
}
declare module '*.storyboard.yml' {
  const storyboard: import('vitest-adcp').Storyboard;
  export default storyboard;
}
