/**
 * The runner's built-in protocol roles, in the order the engine consults them (engine/role.ts): a run opened with
 * `roles: BUILTIN_ROLES` runs storyboards as the reference runner does. A new role is a folder beside these and a line
 * here; the engine does not change.
 */
import type { RunnerRole } from '../engine/role.js';
import { brandJwksRole } from './brand-jwks/index.js';
import { controllerSeedingRole } from './controller-seeding/index.js';
import { oauthProbesRole } from './oauth-probes/index.js';
import { parallelDispatchRole } from './parallel-dispatch/index.js';
import { rateLimitTripRole } from './rate-limit-trip/index.js';
import { requestSigningRole } from './request-signing/index.js';
import { webhookReceiverRole } from './webhook-receiver/index.js';

/**
 * What other layers need of a role outside a run, handed out here so that nothing outside roles/ reaches into a
 * role's folder (`npm run lint`'s layer rule): the request-signing vectors, which the compiler plans from and its
 * cache keys on.
 */
export { requestSigningVectorsDir, signingVectorsFor } from './request-signing/vectors.js';

export const BUILTIN_ROLES: readonly RunnerRole[] = [
  webhookReceiverRole,
  controllerSeedingRole,
  requestSigningRole,
  oauthProbesRole,
  parallelDispatchRole,
  rateLimitTripRole,
  brandJwksRole,
];
