import { resolvePath } from '../model/path.js';
import type { Check } from './types.js';

/**
 * `envelope_field_present`: like `field_present`, but against the protocol
 * envelope (protocol-envelope.json: `status`, `task_id`, `context_id`, …)
 * rather than the task payload. Over MCP the envelope fields sit at the top
 * level of the tool result, and over A2A in the DataPart (not on the A2A
 * Task, whose `status.state` is the A2A call's, not the AdCP task's), so the
 * envelope is the extracted result; a transport that separates the two hands
 * the envelope over as `exchange.envelope`.
 */
export const envelopeFieldPresent: Check = ({ validation, exchange }) => {
  const path = String(validation.path ?? '');
  const found = resolvePath(exchange.envelope ?? exchange.data, path);
  const passed = found.found && found.value !== null;
  return passed
    ? { passed, json_pointer: found.pointer }
    : {
        passed,
        json_pointer: found.pointer,
        expected: path,
        actual: found.found ? found.value : null,
        error: `"${path}" is missing from the protocol envelope`,
      };
};
