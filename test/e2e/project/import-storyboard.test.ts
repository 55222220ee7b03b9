/// <reference path="../../../client.d.ts" />
// A hand-written TS test importing a storyboard: it gets the validated, typed
// object, and importing it does not register the storyboard's tests here.
import { expect, it } from 'vitest';
import discovery from '../../../fixtures/storyboards/discovery.storyboard.yaml';

it('imports a validated, typed storyboard', () => {
  expect(discovery.id).toBe('fixture_discovery');
  const step = discovery.phases[0]!.steps[0]!;
  expect(step.loc.line).toBeGreaterThan(1);
  expect(step.validations.length).toBeGreaterThan(0);
  expect(discovery.file).toMatch(/discovery\.storyboard\.yaml$/);
});
