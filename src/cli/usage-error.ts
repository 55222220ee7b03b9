import { ConfigurationError } from '../model/errors.js';

/** A usage or configuration error of the bin: printed without a stack, exit status 2. */
export class UsageError extends ConfigurationError {}
