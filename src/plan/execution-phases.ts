/**
 * The storyboard's phases as the runner executes them and the compiler shows them: the seeding phase (if any) first,
 * and the runner-synthesized steps in place (the signed_requests vector phases). Pure: the vectors are read by the
 * caller (roles/request-signing/vectors.ts `signingVectorsFor`).
 */
import type { Phase, Storyboard } from '../model/storyboard.js';
import { planSeeding } from './seeding.js';
import { withVectorSteps, type SigningVectorSource } from './signing-vectors.js';

export function executionPhases(storyboard: Storyboard, vectors?: SigningVectorSource): Phase[] {
  const seeding = planSeeding(storyboard).phase;
  const phases = withVectorSteps(storyboard, vectors);
  return seeding ? [seeding, ...phases] : phases;
}
