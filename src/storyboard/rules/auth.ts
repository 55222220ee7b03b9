/**
 * `auth: { type: …, value: "<literal>" }` is DISALLOWED (storyboard-schema.yaml,
 * Step → auth, "DISALLOWED"): literal credentials bind the storyboard to one
 * value, cannot rotate, and leak identity into source.
 */
import { isPlainObject } from '../paths.js';
import { type RuleContext, stepLabel } from './model.js';

export function checkAuthShape(ctx: RuleContext): void {
  for (const step of ctx.steps) {
    const auth = step.raw.auth;
    if (!isPlainObject(auth) || !Object.hasOwn(auth, 'value')) continue;
    ctx.sink.error(
      'literal_auth_value',
      ctx.keyAt([...step.path, 'auth', 'value']),
      `${stepLabel(step)} puts a literal credential in auth.value`,
      'remove `value:` and use `from_test_kit: true` (or a path such as "auth.basic") to take the credential from the test kit, or `value_strategy: random_invalid` for a deliberately bad one',
    );
  }
}
