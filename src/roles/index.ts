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

export const BUILTIN_ROLES: readonly RunnerRole[] = [
  webhookReceiverRole,
  controllerSeedingRole,
  requestSigningRole,
  oauthProbesRole,
  parallelDispatchRole,
  rateLimitTripRole,
  brandJwksRole,
];
