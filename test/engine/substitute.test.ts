import { describe, expect, it } from 'vitest';
import { resolveTask, substitute } from '../../src/engine/substitute.js';

const scope = {
  context: new Map<string, unknown>([
    ['product_id', 'prod_1'],
    ['budget', { total: 5000, currency: 'USD' }],
    ['count', 3],
  ]),
  priorSteps: new Map<string, unknown>([['get_products', { products: [{ product_id: 'prod_9' }] }]]),
  testKit: { auth: { api_key: 'demo-x', probe_task: 'list_creatives' }, brand: { name: 'Acme' } },
};

describe('substitution', () => {
  it('keeps types for whole-token placeholders', () => {
    const r = substitute({ id: '$context.product_id', budget: '$context.budget', n: '$context.count', ids: ['$context.product_id'] }, scope);
    expect(r).toEqual({ value: { id: 'prod_1', budget: { total: 5000, currency: 'USD' }, n: 3, ids: ['prod_1'] }, unresolved: [] });
  });

  it('resolves prior_step and test kit references', () => {
    const r = substitute({ p: '{{prior_step.get_products.products[0].product_id}}', brand: '$test_kit.brand.name', text: 'for {{prior_step.get_products.products[0].product_id}} of $context.product_id' }, scope);
    expect(r.value).toEqual({ p: 'prod_9', brand: 'Acme', text: 'for prod_9 of prod_1' });
  });

  it('reports unresolved placeholders and never invents a value', () => {
    const r = substitute({ a: '$context.nope', b: '{{prior_step.failed_step.id}}', c: '{{runner.webhook_url:x}}' }, scope);
    expect(r.unresolved).toEqual(['$context.nope', '{{prior_step.failed_step.id}}', '{{runner.webhook_url:x}}']);
  });

  it('does not mutate the storyboard', () => {
    const request = { id: '$context.product_id' };
    substitute(request, scope);
    expect(request.id).toBe('$context.product_id');
  });

  it('resolves a task from the test kit with task_default as fallback', () => {
    expect(resolveTask('$test_kit.auth.probe_task', 'get_products', scope.testKit)).toBe('list_creatives');
    expect(resolveTask('$test_kit.auth.nothing', 'get_products', scope.testKit)).toBe('get_products');
    expect(resolveTask('get_products', undefined, undefined)).toBe('get_products');
  });
});
