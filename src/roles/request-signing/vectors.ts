/**
 * Reading the `signed_requests` conformance vectors
 * (`test-vectors/request-signing/{positive,negative}/` of the storyboard's compliance tree): the file reads that
 * planning (plan/signing-vectors.ts, pure) is handed as data — by the compiler's callers, and by this role when a run
 * plans its steps and grades each vector.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { loadSigningVectors, type SigningVectorSet } from '../../signing/vectors.js';
import type { Storyboard } from '../../model/storyboard.js';
import type { SigningVectorSource } from '../../plan/signing-vectors.js';

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

/** The vectors a storyboard file's `signed_requests` phases are planned from, or why there are none. */
export function signingVectorsFor(
  storyboard: Pick<Storyboard, 'file'>,
  options: VectorPlanOptions = {},
): SigningVectorSource {
  const dir = requestSigningVectorsDir(storyboard, options);
  if (!dir)
    return {
      problem: `no test-vectors/request-signing folder beside ${storyboard.file} (or in the compliance tree${options.corpusRoot ? ` ${options.corpusRoot}` : ''})`,
    };
  try {
    return { dir, vectors: vectorsIn(dir) };
  } catch (error) {
    return {
      problem: `cannot read the request-signing vectors in ${dir}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
}
