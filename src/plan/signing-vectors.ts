/**
 * The steps of the `signed_requests` storyboard that the YAML does not write
 * (universal/signed-requests.yaml): its `positive_vectors` and
 * `negative_vectors` phases have no steps, and "step-level entries are
 * synthesized by the runner from the vector fixtures" — one per conformance
 * vector in `test-vectors/request-signing/{positive,negative}/` of the same
 * compliance tree.
 *
 * Planned from the storyboard and the vectors alone, so the compiler shows
 * each vector as an `it` (at the phase's YAML line) and the engine runs the
 * same steps. Pure: the caller reads the vector folder
 * (roles/request-signing/vectors.ts `signingVectorsFor`) and passes what it
 * read, or why it could not. Step ids are the reference runner's (`positive-<vector id>`,
 * `negative-<vector id>`), so the two runners' reports pair up.
 */
import type { SigningVector, SigningVectorSet } from '../signing/vectors.js';
import type { Phase, Step, Storyboard } from '../model/storyboard.js';
import { REQUEST_SIGNING_PROBE_TASK } from '../model/runner-tasks.js';

/** The storyboard whose empty phases get vector steps (the reference runner keys on the same id). */
const SIGNED_REQUESTS_STORYBOARD = 'signed_requests';

/** Phase id → the vector folder its steps come from. */
export const VECTOR_PHASES: Readonly<Record<string, 'positive' | 'negative'>> = {
  positive_vectors: 'positive',
  negative_vectors: 'negative',
};

/** What a synthesized step needs to find and grade its vector (plain JSON: it is inlined into the compiled module). */
export interface VectorRef {
  polarity: 'positive' | 'negative';
  /** The vector file name without `.json`, e.g. `002-wrong-tag`. */
  id: string;
  name: string;
  /** Negative vectors: `expected_outcome.error_code`, graded byte for byte. */
  error_code?: string;
  /** The test-kit contract the vector needs (`replay_window`, `revocation`, `rate_abuse`). */
  requires_contract?: string;
  /** The `test-vectors/request-signing` folder the vector was read from. */
  dir: string;
}

export interface VectorStep extends Step {
  vector: VectorRef;
}

/** The one step a vector phase gets when its vectors cannot be read: it fails with the reason. */
export interface VectorErrorStep extends Step {
  vector_error: string;
}

export function isVectorStep(step: Step): step is VectorStep {
  return typeof (step as VectorStep).vector === 'object' && (step as VectorStep).vector !== null;
}

export function isVectorErrorStep(step: Step): step is VectorErrorStep {
  return typeof (step as VectorErrorStep).vector_error === 'string';
}

/** True for the storyboard whose vector phases the runner fills. */
export function synthesizesVectorSteps(storyboard: Pick<Storyboard, 'id' | 'phases'>): boolean {
  return (
    storyboard.id === SIGNED_REQUESTS_STORYBOARD &&
    storyboard.phases.some((p) => Object.hasOwn(VECTOR_PHASES, p.id) && p.steps.length === 0)
  );
}

/**
 * The conformance vectors of the storyboard's compliance tree as its caller read them: the folder and its vectors, or
 * why there are none (the sentence ends the failing step's message).
 */
export type SigningVectorSource = { dir: string; vectors: SigningVectorSet } | { problem: string };

/** What a compilation whose caller read no vectors plans from: its vector phases' one failing step says so. */
export const VECTORS_NOT_READ: SigningVectorSource = Object.freeze({
  problem: 'the request-signing vectors were not read for this compilation',
});

function vectorStep(phase: Phase, vector: SigningVector, dir: string): VectorStep {
  const ref: VectorRef = {
    polarity: vector.polarity,
    id: vector.id,
    name: vector.name,
    ...(vector.expectedOutcome.success === false && { error_code: vector.expectedOutcome.errorCode }),
    ...(vector.requiresContract !== undefined && { requires_contract: vector.requiresContract }),
    dir,
  };
  return {
    id: `${vector.polarity}-${vector.id}`,
    title: `${vector.id}: ${vector.name}`,
    task: REQUEST_SIGNING_PROBE_TASK,
    // Each vector is graded on its own answer; a failed vector leaves no state behind for the next.
    stateful: false,
    validations: [],
    vector: ref,
    // The YAML has no node for the step: it sits at its phase's line.
    loc: phase.loc,
  };
}

/**
 * The storyboard's phases with the vector phases filled, one step per vector
 * file, sorted by file name. Phases that already have steps (or storyboards
 * other than `signed_requests`) are returned as they are. When the vectors
 * cannot be read, each vector phase gets one step `vectors_unavailable` that
 * fails with the reason — never an empty phase that reads as a pass.
 */
export function withVectorSteps(storyboard: Storyboard, read: SigningVectorSource): Phase[] {
  if (!synthesizesVectorSteps(storyboard)) return storyboard.phases;
  return storyboard.phases.map((phase) => {
    const polarity = Object.hasOwn(VECTOR_PHASES, phase.id) ? VECTOR_PHASES[phase.id] : undefined;
    if (!polarity || phase.steps.length > 0) return phase;
    if ('problem' in read) return { ...phase, steps: [vectorsUnavailable(phase, polarity, read.problem)] };
    return { ...phase, steps: read.vectors[polarity].map((vector) => vectorStep(phase, vector, read.dir)) };
  });
}

function vectorsUnavailable(phase: Phase, polarity: string, problem: string): VectorErrorStep {
  return {
    id: 'vectors_unavailable',
    title: `${polarity} conformance vectors`,
    task: REQUEST_SIGNING_PROBE_TASK,
    stateful: false,
    validations: [],
    vector_error: `the runner synthesizes this phase's steps from the conformance vectors, and ${problem}`,
    loc: phase.loc,
  };
}
