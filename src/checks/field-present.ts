import { resolvePath } from '../model/path.js';
import type { Check } from './types.js';

/**
 * `field_present`: the path resolves to a value. JSON `null` counts as absent:
 * an agent that answers `context: null` has not echoed the context.
 */
export const fieldPresent: Check = ({ validation, exchange }) => {
  const path = String(validation.path ?? '');
  const found = resolvePath(exchange.data, path);
  const passed = found.found && found.value !== null;
  return passed
    ? { passed, json_pointer: found.pointer }
    : {
        passed,
        json_pointer: found.pointer,
        expected: path,
        actual: found.found ? found.value : null,
        error: `"${path}" is missing from the response`,
      };
};
