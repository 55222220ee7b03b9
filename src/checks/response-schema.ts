import type { Check } from './types.js';

/**
 * `response_schema`: the task result validates (ajv, draft-07) against the
 * step's `response_schema_ref`, or the response schema the AdCP manifest
 * declares for the task. `expected` is the schema `$id`; `actual` the errors.
 */
export const responseSchema: Check = ({ step, task, exchange, schemas }) => {
  if (!schemas) {
    return {
      passed: false,
      json_pointer: null,
      expected: step.response_schema_ref ?? `response schema for ${task}`,
      actual: { reason: 'no_schema_registry' },
      schema_id: null,
      schema_url: null,
      error:
        'no AdCP JSON Schemas are available: install @adcp/sdk (npm i -D @adcp/sdk) or set the `schemas` option to a schema directory',
    };
  }
  const ref = step.response_schema_ref ?? schemas.responseSchemaFor(task);
  if (!ref) {
    return {
      passed: false,
      json_pointer: null,
      expected: `response schema for ${task}`,
      actual: { reason: 'no_schema_for_task', task },
      schema_id: null,
      schema_url: null,
      error: `no response schema is known for task "${task}": add response_schema_ref to the step`,
    };
  }
  if (!schemas.resolveRef(ref)) {
    // Contract > validation_result: schema_id/schema_url are required on a response_schema result.
    const presumed = schemas.presumedIdentity(ref);
    return {
      passed: false,
      json_pointer: null,
      expected: presumed.schema_id,
      actual: { reason: 'schema_not_found', ref },
      ...presumed,
      error: `no AdCP schema "${ref}" in ${schemas.dir}: check the step's response_schema_ref, or install the @adcp/sdk version that matches your corpus`,
    };
  }
  const verdict = schemas.validate(ref, exchange.data);
  if (verdict.valid) return { passed: true, schema_id: verdict.schema_id, schema_url: verdict.schema_url };
  return {
    passed: false,
    json_pointer: verdict.errors[0]?.instance_path ?? '',
    expected: verdict.schema_id,
    actual: verdict.errors,
    schema_id: verdict.schema_id,
    schema_url: verdict.schema_url,
    error: verdict.errors
      .slice(0, 5)
      .map((e) => `${e.instance_path || '/'} ${e.message}`)
      .join('; '),
  };
};
