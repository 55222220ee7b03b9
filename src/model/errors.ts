/**
 * A setting that cannot work. Its message says where, what was expected and
 * the fix, so it is shown without a stack trace (Vitest prints startup errors
 * whole; the `vitest-adcp` command prints the message and exits 2).
 */
export class ConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
    this.stack = `${this.name}: ${message}`;
  }
}
