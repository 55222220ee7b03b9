/**
 * `vitest-adcp/matchers`: import once (e.g. in a setup file:
 * `test: { setupFiles: ['vitest-adcp/matchers'] }`) to add the AdCP matchers
 * to Vitest's `expect`:
 *
 * ```ts
 * const res = await adcp.call('list_creatives', {}, { auth: 'none' }); // createAdcpClient() from 'vitest-adcp'
 * expect(res).toRejectUnauthenticated();
 * expect(res).toExposeWwwAuthenticate('Bearer', { error: 'invalid_token' });
 * expect(await adcp.call('list_creatives')).toMatchAdcpSchema();
 * await expect(agentUrl).toRejectUnauthenticated({ task: 'list_creatives' }); // given a URL, the matcher calls it
 * ```
 */
import { expect } from 'vitest';
import { adcpMatchers } from './matchers.js';
import './vitest-types.js';
import './jest-types.js';

export * from './matchers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- Vitest's MatchersObject types `this` as its own MatcherState, ours as the framework-free subset
expect.extend(adcpMatchers as any);
