import { errorCode } from './error-code.js';
import { fieldPresent } from './field-present.js';
import { fieldValue } from './field-value.js';
import { fieldValueOrAbsent } from './field-value-or-absent.js';
import { responseSchema } from './response-schema.js';
import type { Check } from './types.js';

export type { Check, CheckInput, CheckVerdict, Exchange } from './types.js';

/** One pure function per `check` kind of storyboard-schema.yaml > "Validation". */
export const checks: Readonly<Record<string, Check>> = {
  field_present: fieldPresent,
  field_value: fieldValue,
  field_value_or_absent: fieldValueOrAbsent,
  response_schema: responseSchema,
  error_code: errorCode,
};
