/**
 * `skip_if` on a phase (storyboard-schema.yaml > "Phase (optional fields for
 * conditional execution)"): the phase is skipped when the expression is true.
 *
 * The schema gives one form by example (`"!test_kit.auth.api_key"`); we
 * evaluate `[!]test_kit.<path>` (truthiness of a test-kit value). Any other
 * expression — the corpus also has `agent.webhook_auth_mode == 'hmac_legacy'`,
 * which needs agent facts no runner is told — is reported as a warning on
 * every step of the phase and the phase runs: never a silent skip that hides
 * a failure, never a silent run that hides that the condition was ignored.
 */
import { resolvePath } from '../model/path.js';

export type SkipIfVerdict = { kind: 'run' } | { kind: 'skip'; detail: string } | { kind: 'unknown'; warning: string };

const TEST_KIT = /^\s*(!?)\s*test_kit\.([\w.[\]-]+)\s*$/;

export function evaluateSkipIf(expression: string | undefined, phaseId: string, testKit: unknown): SkipIfVerdict {
  if (expression === undefined || expression.trim() === '') return { kind: 'run' };
  const match = TEST_KIT.exec(expression);
  if (!match) {
    return {
      kind: 'unknown',
      warning: `phase "${phaseId}": skip_if "${expression}" is not an expression vitest-adcp can evaluate (supported: "test_kit.<path>" and "!test_kit.<path>"), so the phase ran`,
    };
  }
  const found = resolvePath(testKit, match[2]!);
  const truthy =
    found.found && found.value !== null && found.value !== false && found.value !== '' && found.value !== 0;
  const skip = match[1] ? !truthy : truthy;
  return skip
    ? { kind: 'skip', detail: `phase "${phaseId}" skipped: skip_if "${expression}" is true for this test kit` }
    : { kind: 'run' };
}
