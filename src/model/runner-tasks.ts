/**
 * Names the storyboard format gives the runner's own work, shared by the loader (which must know them to tell a
 * misspelled task) and the engine (which runs them).
 */

/** The task of a synthesized `signed_requests` step: the runner's own signed HTTP request, never an agent tool. */
export const REQUEST_SIGNING_PROBE_TASK = 'request_signing_probe';

/** A `context_outputs` path with this prefix reads the async task's completion, not the immediate answer. */
export const TASK_COMPLETION_PREFIX = 'task_completion.';
