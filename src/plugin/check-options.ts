/**
 * `adcpStoryboards(options)` read strictly: a key the plugin does not know is
 * a configuration error with the key it probably meant, not a silent no-op —
 * `compliance: { storyboard: [...] }` used to run nothing and say nothing.
 * The shape below mirrors AdcpStoryboardsOptions, and the type checker keeps
 * the two in step (`satisfies KeysOf<…>`: a key added to one and not the other
 * does not compile).
 */
import { ConfigurationError } from '../model/errors.js';
import { closestMatch } from '../storyboard/did-you-mean.js';
import type { AdcpStoryboardsOptions } from './options.js';

/** Known keys; a nested object lists the keys of that option's object value. */
type Shape = { readonly [key: string]: Shape | true };

/** Exactly the keys of `T` (TypeScript rejects a missing or an extra one), each `true` or a nested shape. */
type KeysOf<T> = { readonly [K in keyof Required<T>]: Shape | true };

type Options = AdcpStoryboardsOptions;

const OPTION_SHAPE: Shape = {
  include: true,
  files: true,
  compliance: {
    storyboards: true,
    bundles: true,
    tracks: true,
    fromCapabilities: true,
    version: true,
    path: true,
    allowUnsupportedVersion: true,
    baseUrl: true,
  } satisfies KeysOf<NonNullable<Options['compliance']>>,
  agent: {
    url: true,
    protocol: true,
    auth: { token: true },
    allowHttp: true,
    start: { command: true, cwd: true, env: true, timeoutMs: true, reuseExisting: true, watch: true } satisfies KeysOf<
      NonNullable<NonNullable<Options['agent']>['start']>
    >,
  } satisfies KeysOf<NonNullable<Options['agent']>>,
  timeoutMs: true,
  maxResponseBytes: true,
  signedRequests: { skipRateAbuse: true },
  isolate: true,
  sequential: true,
  concurrency: true,
  testKitDirs: true,
  schemasDir: true,
  cacheDir: true,
  strictKeys: true,
  storyboardBounds: {
    maxBytes: true,
    maxAnchors: true,
    maxAliases: true,
    maxExpandedBytes: true,
    maxPhases: true,
    maxSteps: true,
  } satisfies KeysOf<NonNullable<Options['storyboardBounds']>>,
  requests: true,
  seededState: true,
  runnerContracts: {
    parallel_dispatch_runner: true,
    rate_limit_trip_runner: true,
  } satisfies KeysOf<NonNullable<Options['runnerContracts']>>,
  webhooks: {
    receiver: true,
    publicBaseUrl: true,
    host: true,
    port: true,
    allowHttpBaseUrl: true,
    maxBodyBytes: true,
    signerJwks: true,
  } satisfies KeysOf<NonNullable<Options['webhooks']>>,
} satisfies KeysOf<Options>;

/** Every unknown key of `options`, as `path (did you mean …?)`; throws a ConfigurationError when there is one. */
export function checkOptions(options: unknown, shape: Shape = OPTION_SHAPE, at = ''): void {
  const problems = unknownKeys(options, shape, at);
  if (problems.length > 0) {
    throw new ConfigurationError(
      `adcpStoryboards(): unknown option${problems.length === 1 ? '' : 's'} ${problems.join(', ')}. The options are documented in the README and in the AdcpStoryboardsOptions type.`,
    );
  }
}

function unknownKeys(value: unknown, shape: Shape, at: string): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const problems: string[] = [];
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const path = at ? `${at}.${key}` : key;
    const known = shape[key];
    if (known === undefined) {
      const guess = closestMatch(key, Object.keys(shape));
      problems.push(
        `"${path}"${guess ? ` (did you mean "${at ? `${at}.` : ''}${guess}"?)` : ` (known here: ${Object.keys(shape).join(', ')})`}`,
      );
    } else if (known !== true) {
      problems.push(...unknownKeys(inner, known, path));
    }
  }
  return problems;
}
