/**
 * A user's hand-written test file, type-checked only (`npm run typecheck`:
 * tsc --noEmit over tsconfig.test.json, which includes test/): it proves the
 * matcher augmentation — Vitest's `Assertion` and asymmetric matchers, and
 * Jest's `jest.Matchers` without @types/jest — and the client's types. Every
 * `@ts-expect-error` is a use the types must refuse; an unused one fails tsc.
 */
import { expect } from 'vitest';
import '../../src/matchers/index.js';
import { createAdcpClient, type AdcpResponse, type StepResult } from '../../src/index.js';

declare const url: string;
declare const step: StepResult;
declare const response: Response;

export async function userTest(): Promise<void> {
  const adcp = createAdcpClient({ url, protocol: 'mcp', auth: 'token', timeoutMs: 5_000 });
  const res: AdcpResponse = await adcp.call('list_creatives', {}, { auth: 'none' });
  await adcp.call('list_creatives', {}, { auth: { basic: { username: 'u', password: 'p' } } });
  await adcp.call('list_creatives', {}, { auth: { basic: 'u:p' } });
  // @ts-expect-error — auth is 'none', a token, or { basic }
  await adcp.call('list_creatives', {}, { auth: { bearer: 'x' } });
  // @ts-expect-error — protocol is 'mcp' or 'a2a'
  createAdcpClient({ url, protocol: 'grpc' });
  const status: number | undefined = res.status;
  const code: string | undefined = res.headers['www-authenticate'];

  // On a record, each matcher returns nothing (sync); `.not` too.
  const none: void = expect(res).toRejectUnauthenticated();
  expect(res).toRejectUnauthenticated({ allowBadRequest: true });
  expect(res).toExposeWwwAuthenticate('Bearer', {
    error: 'invalid_token',
    realm: expect.stringContaining('agent'),
    scope: /read/,
  });
  expect(res).toExposeWwwAuthenticate({ scheme: 'Basic' });
  expect(res).not.toExposeWwwAuthenticate();
  expect(res).toMatchAdcpSchema('media-buy/list-creatives-response.json');
  expect(res).toMatchAdcpSchema();
  expect(res).toHaveAdcpErrorCode('AUTH_REQUIRED');
  expect(res).toHaveAdcpErrorCode(['AUTH_REQUIRED', 'PERMISSION_DENIED']);
  expect(res).toEchoContext({ correlation_id: 'c-1' });
  expect(step).toPassStoryboardStep();
  expect.soft(step).not.toPassStoryboardStep();
  // @ts-expect-error — a code is a string or a list of strings
  expect(res).toHaveAdcpErrorCode(42);
  // @ts-expect-error — toPassStoryboardStep takes no argument
  expect(step).toPassStoryboardStep('caps');

  // On the agent's URL or a fetch Response the matcher does I/O: it returns a Promise to await.
  const pending: Promise<void> = expect(url).toRejectUnauthenticated({ task: 'list_creatives', protocol: 'a2a' });
  await pending;
  await expect(url).not.toExposeWwwAuthenticate({ scheme: 'Bearer' });
  await expect(response).toMatchAdcpSchema('list_creatives');
  // @ts-expect-error — a record's matcher returns nothing to await into a Promise
  const notAPromise: Promise<void> = expect(res).toRejectUnauthenticated();

  // Asymmetric, on records.
  expect({ answer: res }).toEqual({ answer: expect.toRejectUnauthenticated() });
  expect({ answer: res }).toEqual({ answer: expect.not.toHaveAdcpErrorCode('INVALID_REQUEST') });
  return void [none, status, code, notAPromise];
}

// Jest's matchers, as `expect(x)` returns them under Jest (declared without @types/jest installed).
declare const jestExpect: <T>(
  actual: T,
) => jest.Matchers<void, T> & { not: jest.Matchers<void, T>; resolves: jest.Matchers<Promise<void>, T> };
export async function jestUserTest(res: AdcpResponse): Promise<void> {
  jestExpect(res).toRejectUnauthenticated();
  jestExpect(res).not.toExposeWwwAuthenticate('Bearer', { error: 'invalid_token' });
  jestExpect(res).toHaveAdcpErrorCode('AUTH_REQUIRED');
  await jestExpect(url).toRejectUnauthenticated();
  await jestExpect(Promise.resolve(res)).resolves.toEchoContext({ a: 1 });
}
