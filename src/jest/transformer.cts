/**
 * `vitest-adcp/jest/transformer`: Jest's transformer for storyboard YAML, over the same compiler as the Vite plugin
 * (`compile(…, { framework: 'jest' })`). It returns `{ code, map }`: the map puts each `describe`/`it` on its YAML
 * node, so Jest's test locations (`--testLocationInResults`) and failure frames point at the YAML lines.
 *
 * CommonJS output: Jest requires test files as CommonJS unless a file's extension is in `extensionsToTreatAsEsm`
 * (and Jest runs with --experimental-vm-modules), which `.yaml` is not by default.
 */
import type {
  compileOversizeStoryboard as CompileOversizeStoryboard,
  compileStoryboard as CompileStoryboard,
} from '../compile/compile.js' with { 'resolution-mode': 'import' };
import type { StoryboardBounds } from '../storyboard/bounds.js' with { 'resolution-mode': 'import' };

const { createHash } = require('node:crypto') as typeof import('node:crypto');
// Node's require of an ES module (Node ≥ 20.19 / 22.12).
const { compileOversizeStoryboard, compileStoryboard } = require('../compile/compile.js') as {
  compileStoryboard: typeof CompileStoryboard;
  compileOversizeStoryboard: typeof CompileOversizeStoryboard;
};
const { readStoryboardFile } = require('../storyboard/read.js') as typeof import('../storyboard/read.js');
const { formatDiagnostic } = require('../storyboard/diagnostics.js') as typeof import('../storyboard/diagnostics.js');
const { complianceFromEnv, runCorpus } = require('../corpus.js') as typeof import('../corpus.js');
const { signingVectorsFor } = require('../roles/index.js') as typeof import('../roles/index.js');

/** Options: `transform: { '\\.storyboard\\.ya?ml$': ['vitest-adcp/jest/transformer', { strictKeys: false }] }`. */
interface TransformerOptions {
  /** LoadOptions.strictKeys. @default true */
  strictKeys?: boolean;
  /** Corpus version or path (env ADCP_COMPLIANCE), for test kits named relative to the corpus. @default newest installed */
  compliance?: string;
  /** Size and complexity bounds on each storyboard file (adcpStoryboards() option `storyboardBounds`). */
  storyboardBounds?: StoryboardBounds;
}

/** A stub test file standing for a corpus storyboard (preset option `compliance`): its first line names the real file. */
const CORPUS_STUB = /^# vitest-adcp corpus storyboard: (.+)$/m;

const runtime = require.resolve('./runtime.cjs');
/**
 * Part of the cache key: this package's code (cache/disk-cache.ts), not just its version — a new or, in development,
 * edited compiler compiles differently under the same version, and Jest would serve the old module.
 */
const { packageFingerprint } = require('../cache/disk-cache.js') as typeof import('../cache/disk-cache.js');

/** Resolved once per named corpus and root (Jest calls process() for every file). */
const corpusRoots = new Map<string, string | undefined>();
function corpusRoot(options: TransformerOptions, rootDir: string): string | undefined {
  const named = options.compliance ?? complianceFromEnv();
  const key = `${named ?? ''}\0${rootDir}`;
  if (!corpusRoots.has(key)) corpusRoots.set(key, runCorpus(named, rootDir)?.root);
  return corpusRoots.get(key);
}

/** The file to compile: the test file itself, or the corpus storyboard a stub names (not read when over the byte bound). */
function source(
  sourceText: string,
  sourcePath: string,
  bounds: StoryboardBounds | undefined,
): { text: string; file: string; oversize?: number } {
  const stub = CORPUS_STUB.exec(sourceText.slice(0, 2000));
  if (!stub) return { text: sourceText, file: sourcePath };
  const file = stub[1]!.trim();
  const read = readStoryboardFile(file, bounds);
  if (read.ok) return { text: read.text, file };
  // Over the byte bound: nothing read, compiled as its one load failure. Unreadable: Jest reports the error.
  if (read.oversize === undefined) throw new Error(read.diagnostics.map(formatDiagnostic).join('\n'));
  return { text: '', file, oversize: read.oversize };
}

function createTransformer(options: TransformerOptions = {}) {
  return {
    canInstrument: false,
    getCacheKey(sourceText: string, sourcePath: string, transformOptions: { configString: string }) {
      const { text, file, oversize } = source(sourceText, sourcePath, options.storyboardBounds);
      return createHash('sha256')
        .update(
          [
            packageFingerprint(),
            __filename,
            runtime,
            file,
            text,
            transformOptions.configString,
            JSON.stringify(options),
            String(oversize ?? ''),
            process.env.ADCP_COMPLIANCE ?? '',
          ].join('\0'),
        )
        .digest('hex');
    },
    process(sourceText: string, sourcePath: string, transformOptions: { config: { rootDir: string } }) {
      const { text, file, oversize } = source(sourceText, sourcePath, options.storyboardBounds);
      const root = corpusRoot(options, transformOptions.config.rootDir);
      const compileOptions = {
        runtime,
        framework: 'jest' as const,
        corpusRoot: root,
        // The compiler reads no file: the signed_requests vector steps are planned from the vectors read here, as the
        // plugin does (and as the step session plans them for the report).
        signingVectors: signingVectorsFor({ file }, { corpusRoot: root }),
        ...(options.strictKeys === false ? { strictKeys: false } : {}),
        ...(options.storyboardBounds ? { bounds: options.storyboardBounds } : {}),
      };
      const result =
        oversize === undefined
          ? compileStoryboard(text, file, compileOptions)
          : compileOversizeStoryboard(file, oversize, compileOptions);
      for (const d of result.diagnostics.filter((d) => d.severity === 'warning')) {
        process.stderr.write(
          `vitest-adcp: ${d.file}:${d.line}:${d.column}: [${d.rule}] ${d.message}${d.hint ? ` — ${d.hint}` : ''}\n`,
        );
      }
      return { code: result.code, map: result.map.toString() };
    },
  };
}

module.exports = { createTransformer, ...createTransformer() };
