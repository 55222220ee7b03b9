import { envelopeFieldPresent } from './envelope-field-present.js';
import { errorCode } from './error-code.js';
import { httpStatus, httpStatusIn, on401RequireHeader, resourceEqualsAgentUrl } from './http-status.js';
import { fieldPresent } from './field-present.js';
import { fieldValue } from './field-value.js';
import { fieldValueOrAbsent } from './field-value-or-absent.js';
import { a2aSubmittedArtifact } from './a2a-submitted-artifact.js';
import { refsResolve } from './refs-resolve.js';
import { responseSchema } from './response-schema.js';
import { statusCode } from './status-code.js';
import type { Check } from './types.js';

export type { Check, CheckInput, CheckVerdict } from './types.js';
export type { Exchange } from '../model/exchange.js';

/**
 * One pure function per `check` kind of storyboard-schema.yaml > "Validation".
 * `any_of` is graded by the engine (it reads the run's branch-set
 * contributions).
 */
export const checks: Readonly<Record<string, Check>> = {
  field_present: fieldPresent,
  envelope_field_present: envelopeFieldPresent,
  field_value: fieldValue,
  field_value_or_absent: fieldValueOrAbsent,
  response_schema: responseSchema,
  error_code: errorCode,
  status_code: statusCode,
  refs_resolve: refsResolve,
  a2a_submitted_artifact: a2aSubmittedArtifact,
  http_status: httpStatus,
  http_status_in: httpStatusIn,
  on_401_require_header: on401RequireHeader,
  resource_equals_agent_url: resourceEqualsAgentUrl,
};
