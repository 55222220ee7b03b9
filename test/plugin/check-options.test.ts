import { describe, expect, it } from 'vitest';
import { adcpStoryboards } from '../../src/index.js';
import { checkOptions } from '../../src/plugin/check-options.js';

describe('adcpStoryboards() options', () => {
  it('names a misspelt option and what was probably meant, at any depth', () => {
    expect(() => adcpStoryboards({ compliance: { storyboard: ['capability_discovery'] } } as never)).toThrow(
      'adcpStoryboards(): unknown option "compliance.storyboard" (did you mean "compliance.storyboards"?). The options are documented in the README and in the AdcpStoryboardsOptions type.',
    );
    expect(() => checkOptions({ agnet: { url: 'x' }, agent: { auth: { tokn: 't' } } })).toThrow(
      'adcpStoryboards(): unknown options "agnet" (did you mean "agent"?), "agent.auth.tokn" (did you mean "agent.auth.token"?).',
    );
  });

  it('lists what is known where nothing is close', () => {
    expect(() => checkOptions({ agent: { zzzzzz: 1 } })).toThrow(
      'unknown option "agent.zzzzzz" (known here: url, protocol, auth, allowHttp, start)',
    );
  });

  it('takes every documented option', () => {
    expect(() =>
      adcpStoryboards({
        include: ['**/*.storyboard.yaml'],
        files: [],
        compliance: {
          storyboards: [],
          bundles: [],
          tracks: [],
          fromCapabilities: false,
          version: '3.0.6',
          path: undefined,
        },
        agent: {
          url: 'http://127.0.0.1:1/mcp',
          protocol: 'mcp',
          auth: { token: 't' },
          allowHttp: false,
          start: {
            command: ['node', 'agent.js'],
            cwd: '.',
            env: {},
            timeoutMs: 1000,
            reuseExisting: false,
            watch: ['src/**'],
          },
        },
        timeoutMs: 1,
        maxResponseBytes: 1,
        signedRequests: { skipRateAbuse: true },
        isolate: false,
        testKitDirs: [],
        schemasDir: '.',
        webhooks: { receiver: 'off' },
      }),
    ).not.toThrow();
  });
});
