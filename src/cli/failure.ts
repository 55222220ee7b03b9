/** How the command fails before or as the run starts: exit status 2, with one message and no stack for a configuration error. */
import { ConfigurationError } from '../model/errors.js';
import { sanitizeOutput, scrubSecrets } from '../model/redact.js';

/** A configuration error, however it reached us (thrown here, by the plugin, or by a global setup in Vitest's module graph). */
export function isConfigurationError(error: unknown): error is Error {
  return error instanceof ConfigurationError || (error instanceof Error && /ConfigurationError$/.test(error.name));
}

/** The exit-2 message: it can quote an agent (a capability call it failed), so scrubbed and sanitised like any output. */
export function configurationFailure(error: unknown, usage: boolean, secrets: readonly string[] = []): number {
  const safe = (text: string) => sanitizeOutput(scrubSecrets(text, secrets));
  if (isConfigurationError(error)) {
    // A message of the plugin's own may name us already (preflight: "vitest-adcp cannot run the storyboards: …").
    const message = /^vitest-adcp\b/.test(error.message) ? error.message : `vitest-adcp: ${error.message}`;
    console.error(safe(`${message}${usage ? '\nRun `npx vitest-adcp --help` for the options.' : ''}`));
  } else {
    console.error(
      safe(
        `vitest-adcp: could not start the run: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      ),
    );
  }
  return 2;
}
