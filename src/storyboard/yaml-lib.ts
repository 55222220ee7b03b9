/**
 * The `yaml` package, loaded on its first use rather than with the modules that use it. A Vitest worker imports the
 * storyboard runtime, and with it these modules, but parses no YAML at all when its storyboards come compiled (their
 * modules embed their data) and their test kits from the cache: importing it cost each worker, and each run's main
 * process, several hundredths of a second for nothing. `yaml` resolves to the same CommonJS build either way.
 */
import { createRequire } from 'node:module';

export type Yaml = typeof import('yaml');

let loaded: Yaml | undefined;

export function yaml(): Yaml {
  return (loaded ??= createRequire(import.meta.url)('yaml') as Yaml);
}
