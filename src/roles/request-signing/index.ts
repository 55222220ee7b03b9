/**
 * The request-signing role (universal/signed-requests.yaml): the `signed_requests` vector phases filled with one step
 * per conformance vector (plan/signing-vectors.ts, from the vectors vectors.ts reads), each graded on the runner's own
 * signed HTTP request (probe.ts, build.ts); the capability step whose answer says whether the vectors apply at all.
 */
import { authorizationHeader } from '../../transport/types.js';
import type { Step, TestKit } from '../../model/storyboard.js';
import type { BoundSettings, RoleRun, RoleSession, RunnerRole } from '../../engine/role.js';
import { REQUEST_SIGNING_PROBE_TASK } from '../../model/runner-tasks.js';
import { synthesizesVectorSteps, withVectorSteps, type VectorStep } from '../../plan/signing-vectors.js';
import { RequestSigningProbes } from './probe.js';
import { signingVectorsFor } from './vectors.js';

export const requestSigningRole: RunnerRole = {
  name: 'request-signing',
  tasks: new Set([REQUEST_SIGNING_PROBE_TASK]),
  stepBoundMs: (step, settings) => vectorBoundMs(step, settings),
  // The vectors the caller read (the compiler's), else read here — only for the storyboard that has vector phases to fill.
  plan: (phases, storyboard, settings) =>
    synthesizesVectorSteps(storyboard)
      ? withVectorSteps(
          { ...storyboard, phases },
          settings.signingVectors ?? signingVectorsFor(storyboard, { corpusRoot: settings.corpusRoot }),
        )
      : phases,
  open: (run) => signingSession(run),
};

function signingSession(run: RoleRun): RoleSession {
  const { settings, storyboard } = run;
  let probes: RequestSigningProbes | undefined;
  // Created on first use: the agent's URL and protocol are known once the transport is.
  const opened = () =>
    (probes ??= new RequestSigningProbes({
      storyboard,
      agentUrl: run.transport().url,
      protocol: run.transport().kind,
      authorization: () => authorizationHeader(run.defaultCredentials()),
      timeoutMs: settings.timeoutMs,
      maxResponseBytes: settings.maxResponseBytes ?? 10 * 1024 * 1024,
      testKit: settings.testKit,
      skipRateAbuse: settings.requestSigning?.skipRateAbuse,
      fetchCapabilities: () =>
        run
          .transport()
          .call('get_adcp_capabilities', {}, { credentials: run.defaultCredentials(), timeoutMs: settings.timeoutMs }),
    }));
  return {
    run: async ({ step, tools }, result) => ({ result: await opened().run(step, result, tools) }),
    verdict: ({ step, phase, task }, exchange, graded) =>
      opened().isCapabilityStep(phase, task) ? opened().capabilityVerdict(step, phase, exchange, graded) : undefined,
  };
}

/**
 * The vectors with a stateful contract send more than one request — 016 two, 020 a flood that stops when the
 * contract's window closes, then the graded one; every other vector step sends one request of its own (raw HTTP,
 * never resent for a rate limit), within the run's per-step bound. A step that is not a vector step: the engine's.
 */
function vectorBoundMs(step: Step, settings: BoundSettings): number | undefined {
  const timeoutMs = settings.timeoutMs;
  const vector = (step as Partial<VectorStep>).vector;
  if (!vector) return undefined;
  const contract = vector.requires_contract;
  if (contract === 'replay_window') return 2 * timeoutMs;
  if (contract !== 'rate_abuse' || settings.requestSigning?.skipRateAbuse) return timeoutMs;
  // The flood stops once the window has passed; the request in flight then and the graded one are each bounded.
  return rateAbuseWindowSeconds(settings.testKit) * 1000 + 2 * timeoutMs;
}

function rateAbuseWindowSeconds(testKit: TestKit | undefined): number {
  const terms = (testKit?.stateful_vector_contract as { rate_abuse?: { window_seconds?: unknown } } | undefined)
    ?.rate_abuse;
  return typeof terms?.window_seconds === 'number' && terms.window_seconds > 0 ? terms.window_seconds : 0;
}
