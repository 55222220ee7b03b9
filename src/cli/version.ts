/** `npx vitest-adcp --version`: this package's version, and the Vitest, @adcp/sdk and corpus a run would use. */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { findSdkRoot, resolveCorpus } from '../corpus.js';
import { ownVersion, packageVersionAt } from '../model/package-version.js';

/** `--version`: this package's, and the Vitest and @adcp/sdk (and corpus) a run from `cwd` would use. */
export function printVersions(cwd: string, corpusVersion: string | undefined): number {
  const own = ownVersion();
  let vitestJson: string | undefined;
  try {
    // The Vitest this command imports: resolved from here, as `import('vitest/node')` resolves it.
    vitestJson = createRequire(import.meta.url).resolve('vitest/package.json');
  } catch {
    vitestJson = undefined;
  }
  const vitest = packageVersionAt(vitestJson);
  const sdkRoot = findSdkRoot(cwd);
  const sdk = packageVersionAt(sdkRoot ? resolve(sdkRoot, 'package.json') : undefined);
  let corpus: string;
  try {
    const found = resolveCorpus(corpusVersion, cwd);
    corpus = `compliance corpus ${found.version ?? 'of unknown version'} (${found.choice})`;
  } catch {
    corpus = corpusVersion ? `no compliance corpus ${corpusVersion}` : 'no compliance corpus';
  }
  console.log(
    `vitest-adcp ${own} (vitest ${vitest ?? 'not installed'}, @adcp/sdk ${sdk ?? 'not installed'}, ${corpus})`,
  );
  return 0;
}
