/**
 * What the benches (bench/*.mjs, through dist/internal.js) drive directly: the engine's pieces beyond the plugin. Built
 * to dist/internal.js but not in package.json `exports`, so no user can import it (`vitest-adcp/dist/internal.js` is
 * refused by Node's exports check): these may change in any release. The public API is index.ts; tests import from
 * src/ directly.
 */
export { closeSharedSessions, openStoryboardRun } from './open-run.js';
export { loadStoryboard, loadStoryboardFile } from './storyboard/load.js';
export { findSdkRoot, installedCorpusVersions, resolveCorpus, type Corpus } from './corpus.js';
export { listCorpus, type CorpusEntry } from './storyboard/select.js';
export { compileStoryboard, type CompileResult } from './compile/compile.js';
export { McpTransport } from './transport/mcp.js';
export { WebhookReceiver } from './webhooks/receiver.js';
export { storyboardModulesDir } from './plugin/module-cache.js';
export { storedStoryboardsDir } from './cache/stored-storyboards.js';
