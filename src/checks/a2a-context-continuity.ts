import type { Check } from './types.js';

/**
 * `a2a_context_continuity` (runner-output-contract.yaml 2.6.0 > authored_check_kinds): over A2A, a follow-up send in
 * a storyboard's conversation gets a Task in the same context — A2A 0.3 §7.1: the server MUST echo the
 * client-supplied `contextId`. The engine sends the previous A2A step's `contextId` on a step that carries this check
 * (CallOptions.a2aContextId) and hands the check that step and its id (`priorA2a`). It does not apply — passed, with
 * an observation saying why — over MCP, on the first A2A step, when the previous Task named no context, or on a
 * JSON-RPC error (continuity is undefined for a call the transport rejected). Pointers are into the A2A Task (the
 * JSON-RPC `result`, recorded as `response.payload`).
 */
export const a2aContextContinuity: Check = ({ exchange, priorA2a }) => {
  const skip = (why: string) => ({ passed: true, json_pointer: null, observations: [why] });
  if (exchange.request.transport !== 'a2a')
    return skip(`not applicable: the agent was reached over ${exchange.request.transport}`);
  if (exchange.rpcError || exchange.transportError)
    return skip('not applicable: the call got no A2A Task (a JSON-RPC or transport error)');
  if (!priorA2a) return skip('not applicable: the first A2A step of the run, nothing to continue');
  if (priorA2a.contextId === undefined)
    return skip(`not applicable: the previous A2A step ("${priorA2a.step}") answered with no Task.contextId`);
  const task = exchange.response?.payload as { contextId?: unknown } | undefined;
  const contextId = typeof task?.contextId === 'string' && task.contextId !== '' ? task.contextId : null;
  if (contextId === priorA2a.contextId) return { passed: true, json_pointer: '/contextId' };
  return {
    passed: false,
    json_pointer: '/contextId',
    expected: priorA2a.contextId,
    actual: contextId,
    error:
      contextId === null
        ? `the Task carries no contextId; the follow-up send named the context of step "${priorA2a.step}" (A2A 0.3 §7.1: the server echoes it)`
        : `the Task is in another context than the one the follow-up send named (step "${priorA2a.step}"'s): the server did not echo the client's contextId (A2A 0.3 §7.1)`,
  };
};
