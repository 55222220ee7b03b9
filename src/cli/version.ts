/** `npx vitest-adcp --version`: this package's version, and the Vitest, @adcp/sdk and corpus a run would use. */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findSdkRoot, resolveCorpus } from '../corpus.js';

/** The version of the package at `packageJson`, or undefined when it cannot be read. */
function packageVersion(packageJson: string | undefined): string | undefined {
  if (!packageJson) return undefined;
  try {
    const version = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: unknown }).version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

/** `--version`: this package's, and the Vitest and @adcp/sdk (and corpus) a run from `cwd` would use. */
export function printVersions(cwd: string, corpusVersion: string | undefined): number {
  const own = packageVersion(fileURLToPath(new URL('../../package.json', import.meta.url))) ?? 'unknown';
  let vitestJson: string | undefined;
  try {
    // The Vitest this command imports: resolved from here, as `import('vitest/node')` resolves it.
    vitestJson = createRequire(import.meta.url).resolve('vitest/package.json');
  } catch {
    vitestJson = undefined;
  }
  const vitest = packageVersion(vitestJson);
  const sdkRoot = findSdkRoot(cwd);
  const sdk = packageVersion(sdkRoot ? resolve(sdkRoot, 'package.json') : undefined);
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
