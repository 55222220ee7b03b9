/* eslint-disable-next-line @typescript-eslint/triple-slash-reference -- the built declarations must keep it: `/// <reference types="vitest-adcp/client" />` gives the *.storyboard.yaml module type (client.d.ts) */
/// <reference path="../../client.d.ts" preserve="true" />
/**
 * `vitest-adcp/client`: the client and the matchers without the plugin, for
 * hand-written tests under any runner. `import` gets this ES module; `require`
 * (Jest, any Node ≥ 20 CommonJS code) gets the same code built as CommonJS
 * (`dist/cjs/`, scripts/build-cjs.mjs), with no ES module in its graph — Jest's
 * module registry cannot load one on Node 20.
 *
 * ```js
 * const { createAdcpClient } = require('vitest-adcp/client');
 * const adcp = createAdcpClient({ url: process.env.ADCP_AGENT_URL, auth: process.env.ADCP_AUTH_TOKEN });
 * ```
 *
 * As a type reference (`/// <reference types="vitest-adcp/client" />`) it also
 * declares `import sb from './flow.storyboard.yaml'` (client.d.ts).
 *
 * Here, not in client/: it joins client/ and matchers/, and matchers/ is the higher layer (its probes call the client).
 */
// The matchers' types on Vitest's `expect` and Jest's `jest.Matchers`, wherever this module is imported.
import './vitest-types.js';
import './jest-types.js';

export {
  createAdcpClient,
  type AdcpClient,
  type AdcpClientOptions,
  type AdcpCallOptions,
  type AdcpResponse,
  type AdcpAuth,
} from '../client/client.js';
export * from './matchers.js';
