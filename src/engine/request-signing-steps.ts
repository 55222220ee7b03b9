/**
 * The steps of the `signed_requests` storyboard that the YAML does not write
 * (universal/signed-requests.yaml): its `positive_vectors` and
 * `negative_vectors` phases have no steps, and "step-level entries are
 * synthesized by the runner from the vector fixtures" — one per conformance
 * vector in `test-vectors/request-signing/{positive,negative}/` of the same
 * compliance tree.
 *
 * Planned from the storyboard and the vector folder alone, so the compiler
 * shows each vector as an `it` (at the phase's YAML line) and the engine runs
 * the same steps. Step ids are the reference runner's (`positive-<vector id>`,
 * `negative-<vector id>`), so the two runners' reports pair up.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadSigningVectors, type SigningVector, type SigningVectorSet } from '../signing/vectors.js';
import type { Phase, Step, Storyboard } from '../model/storyboard.js';

import { REQUEST_SIGNING_PROBE_TASK } from '../model/runner-tasks.js';

export { REQUEST_SIGNING_PROBE_TASK };

/** The storyboard whose empty phases get vector steps (the reference runner keys on the same id). */
export const SIGNED_REQUESTS_STORYBOARD = 'signed_requests';

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

export interface VectorPlanOptions {
  /** Root of the compliance tree the run uses, when the storyboard file is not inside one. */
  corpusRoot?: string;
}

/**
 * The `test-vectors/request-signing` folder of the storyboard's compliance
 * tree: the nearest ancestor directory of the storyboard file that has one
 * (the storyboard and its vectors are one compliance version), else the run's
 * corpus root.
 */
export function requestSigningVectorsDir(
  storyboard: Pick<Storyboard, 'file'>,
  options: VectorPlanOptions = {},
): string | undefined {
  const inTree = (root: string) => path.join(root, 'test-vectors', 'request-signing');
  for (let dir = path.dirname(path.resolve(storyboard.file)); ; dir = path.dirname(dir)) {
    if (existsSync(inTree(dir))) return inTree(dir);
    if (path.dirname(dir) === dir) break;
  }
  return options.corpusRoot && existsSync(inTree(options.corpusRoot)) ? inTree(options.corpusRoot) : undefined;
}

const loaded = new Map<string, SigningVectorSet>();

/** The vectors (and keys.json) of a `test-vectors/request-signing` folder, read once per process. */
export function vectorsIn(dir: string): SigningVectorSet {
  let vectors = loaded.get(dir);
  if (!vectors) {
    // loadSigningVectors takes a compliance tree: the folder's grandparent.
    vectors = loadSigningVectors('request-signing', { compliance: path.dirname(path.dirname(dir)) });
    loaded.set(dir, vectors);
  }
  return vectors;
}

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
export function withVectorSteps(storyboard: Storyboard, options: VectorPlanOptions = {}): Phase[] {
  if (!synthesizesVectorSteps(storyboard)) return storyboard.phases;
  const dir = requestSigningVectorsDir(storyboard, options);
  let vectors: SigningVectorSet | undefined;
  let problem: string | undefined;
  if (!dir)
    problem = `no test-vectors/request-signing folder beside ${storyboard.file} (or in the compliance tree${options.corpusRoot ? ` ${options.corpusRoot}` : ''})`;
  else {
    try {
      vectors = vectorsIn(dir);
    } catch (error) {
      problem = `cannot read the request-signing vectors in ${dir}: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  return storyboard.phases.map((phase) => {
    const polarity = Object.hasOwn(VECTOR_PHASES, phase.id) ? VECTOR_PHASES[phase.id] : undefined;
    if (!polarity || phase.steps.length > 0) return phase;
    if (!vectors) {
      const step: VectorErrorStep = {
        id: 'vectors_unavailable',
        title: `${polarity} conformance vectors`,
        task: REQUEST_SIGNING_PROBE_TASK,
        stateful: false,
        validations: [],
        vector_error: `the runner synthesizes this phase's steps from the conformance vectors, and ${problem}`,
        loc: phase.loc,
      };
      return { ...phase, steps: [step] };
    }
    return { ...phase, steps: vectors[polarity].map((vector) => vectorStep(phase, vector, dir!)) };
  });
}
