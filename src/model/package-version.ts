/**
 * Versions read from package.json files: this package's own (the report's `runner.version`, the MCP client's
 * `clientInfo`, `--version`) and an installed package's (Vitest, @adcp/sdk). One reader, so every place that names a
 * version names the same one.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The version of the package whose package.json is at `packageJson`, or undefined when it cannot be read. */
export function packageVersionAt(packageJson: string | undefined): string | undefined {
  if (!packageJson) return undefined;
  try {
    const version = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: unknown }).version;
    return typeof version === 'string' ? version : undefined;
  } catch {
    return undefined;
  }
}

let own: string | undefined;

/** This package's version, `unknown` when its package.json cannot be read (src/ and dist/ sit two levels below it). */
export function ownVersion(): string {
  own ??= packageVersionAt(fileURLToPath(new URL('../../package.json', import.meta.url))) ?? 'unknown';
  return own;
}
