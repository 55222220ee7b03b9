/**
 * `canonical_format_satisfaction` (storyboard-schema.yaml > "Canonical format satisfaction", AdCP 3.1) on hand-made
 * create_media_buy exchanges. The products are the seeded fixtures of the 3.1 corpus storyboard
 * protocols/media-buy/scenarios/canonical_formats.yaml (copied here, format fields only: the test needs no corpus),
 * plus products of the same shape for what that storyboard does not exercise (durations, ranges, sizes, publisher
 * options).
 */
import { describe, expect, it } from 'vitest';
import { checks, type CheckVerdict, type Exchange, type PriorAnswer } from '../../src/checks/index.js';
import type { Validation } from '../../src/model/storyboard.js';

const loc = { line: 1, column: 1 };
const AAO = 'https://creative.adcontextprotocol.org/';

// --- canonical_formats.yaml fixtures -------------------------------------------------------------------------------

const IMAGE_MREC_PARAMS = {
  width: 300,
  height: 250,
  max_file_size_kb: 200,
  image_formats: ['jpg', 'png'],
  ssl_required: true,
  asset_source: 'buyer_uploaded',
  buyer_asset_acceptance: 'accepted',
  composition_model: 'deterministic',
  slots: [{ asset_group_id: 'image_main', asset_type: 'image', required: true }],
};

/** Dual emission: `format_ids[]` and a fixed 300x250 image declaration linked back by `v1_format_ref[]`. */
const MREC = {
  product_id: 'canonical_formats_mrec_display',
  name: 'Canonical Formats MREC Display',
  channels: ['display'],
  delivery_type: 'guaranteed',
  format_ids: [{ agent_url: AAO, id: 'display_300x250_image' }],
  format_options: [
    {
      format_kind: 'image',
      format_option_id: 'canonical_formats_image_mrec',
      display_name: 'Canonical Formats Image MREC',
      v1_format_ref: [{ agent_url: AAO, id: 'display_300x250_image' }],
      params: IMAGE_MREC_PARAMS,
    },
  ],
  pricing_options: [
    { pricing_option_id: 'canonical_formats_mrec_cpm', pricing_model: 'cpm', currency: 'USD', fixed_price: 12 },
  ],
};

/** v1-only emission. */
const IDS_ONLY = {
  product_id: 'canonical_formats_ids_only_display',
  name: 'Canonical Formats IDs Only Display',
  delivery_type: 'guaranteed',
  format_ids: [{ agent_url: AAO, id: 'display_728x90_image' }],
};

/** Dual emission whose `format_ids[]` and `v1_format_ref[]` disagree on purpose. */
const DIVERGENT = {
  product_id: 'canonical_formats_divergent_display',
  name: 'Canonical Formats Divergent Display',
  delivery_type: 'guaranteed',
  format_ids: [{ agent_url: AAO, id: 'display_300x250_image' }],
  format_options: [
    {
      format_kind: 'image',
      format_option_id: 'canonical_formats_divergent_image',
      v1_format_ref: [{ agent_url: AAO, id: 'display_728x90_image' }],
      params: { ...IMAGE_MREC_PARAMS, width: 728, height: 90 },
    },
  ],
};

// --- products of the same shape, for the rules the storyboard does not reach ---------------------------------------

const product = (product_id: string, ...format_options: Record<string, unknown>[]) => ({
  product_id,
  name: product_id,
  delivery_type: 'guaranteed',
  format_options,
});
const PREROLL = product('preroll_30s', {
  format_kind: 'video_hosted',
  format_option_id: 'preroll_30s',
  params: { duration_ms_exact: 30000, containers: ['mp4'] },
});
const AUDIO_UP_TO_60S = product('audio_up_to_60s', {
  format_kind: 'audio_hosted',
  format_option_id: 'audio_spot',
  params: { duration_ms_range: [null, 60000], loudness_lufs: -16 },
});
const AUDIO_EXACT_BEATS_RANGE = product('audio_exact_30s', {
  format_kind: 'audio_hosted',
  format_option_id: 'audio_exact',
  params: { duration_ms_exact: 30000, duration_ms_range: [15000, 60000] },
});
const MULTI_SIZE = product('multi_size_banner', {
  format_kind: 'image',
  format_option_id: 'multi_size',
  params: {
    sizes: [
      { width: 300, height: 250 },
      { width: 728, height: 90 },
      { width: 970, height: 250 },
    ],
  },
});
const RESPONSIVE = product('responsive_banner', {
  format_kind: 'html5',
  format_option_id: 'responsive',
  params: { min_width: 300, max_width: 970, min_height: 50, max_height: 250 },
});
const ANY_SIZE_IMAGE = product('any_size_image', {
  format_kind: 'image',
  format_option_id: 'any_size',
  params: { image_formats: ['jpg', 'png'], ssl_required: false },
});
const PUBLISHER_REELS = product(
  'reels_product',
  {
    format_kind: 'video_hosted',
    format_option_id: 'meta_reels',
    publisher_domain: 'meta.example',
    params: { duration_ms_range: [3000, 90000] },
  },
  { format_kind: 'image', format_option_id: 'feed_image', params: { width: 1080, height: 1080 } },
);
const NO_OPTION_IDS = product('no_option_ids', { format_kind: 'image', params: { width: 300, height: 250 } });
const MIN_BITRATE = product('min_bitrate', { format_kind: 'video_hosted', params: { min_bitrate_kbps: 2000 } });

const ALL_PRODUCTS = [
  MREC,
  IDS_ONLY,
  DIVERGENT,
  PREROLL,
  AUDIO_UP_TO_60S,
  AUDIO_EXACT_BEATS_RANGE,
  MULTI_SIZE,
  RESPONSIVE,
  ANY_SIZE_IMAGE,
  PUBLISHER_REELS,
  NO_OPTION_IDS,
  MIN_BITRATE,
];

// --- exchanges ------------------------------------------------------------------------------------------------------

const discovered = (step: string, products: unknown[], task = 'get_products'): PriorAnswer => ({
  step,
  task,
  request: { buying_mode: 'wholesale' },
  data: { products },
  passed: true,
});
const HISTORY = [discovered('get_canonical_product_for_create_satisfaction', ALL_PRODUCTS)];

const ACCEPTED = { media_buy_id: 'mb_canonical_1', status: 'completed', packages: [{ package_id: 'pkg_1' }] };
/** What the storyboard's negative step expects: UNSUPPORTED_FEATURE, `field` at the failing selector. */
const REJECTED_FOR_FORMAT = {
  errors: [
    {
      code: 'UNSUPPORTED_FEATURE',
      field: 'packages[0].format_kind',
      message: 'The product fixes image 300x250; the selector declares no dimensions',
    },
  ],
};
const REJECTED_FOR_AUTH = { errors: [{ code: 'AUTH_REQUIRED', message: 'Credentials are missing or expired' }] };

const mrecPackage = (selector: Record<string, unknown>, product_id = MREC.product_id) => ({
  product_id,
  budget: 1000,
  pricing_option_id: 'canonical_formats_mrec_cpm',
  ...selector,
});
/** The storyboard's positive package: the legacy fixed MREC selector. */
const LEGACY_MREC = mrecPackage({ format_ids: [{ agent_url: AAO, id: 'display_300x250_image' }] });
/** The storyboard's negative package: a bare canonical image selector. */
const BARE_IMAGE = mrecPackage({ format_kind: 'image' });

interface Grade {
  value?: unknown;
  path?: string;
  packages?: unknown;
  payload?: unknown;
  answer?: unknown;
  exchange?: Partial<Exchange>;
  history?: PriorAnswer[];
  task?: string;
}

function grade({
  value = true,
  path,
  packages = [LEGACY_MREC],
  answer = ACCEPTED,
  history = HISTORY,
  task = 'create_media_buy',
  ...more
}: Grade): CheckVerdict {
  const payload = 'payload' in more ? more.payload : { account: { sandbox: true }, packages };
  const validation = { check: 'canonical_format_satisfaction', value, ...(path ? { path } : {}), loc } as Validation;
  return checks.canonical_format_satisfaction!({
    validation,
    step: { id: 'create', task, validations: [validation], loc },
    task,
    exchange: {
      request: { transport: 'mcp', operation: task, payload },
      response: { transport: 'mcp', payload: {}, status: 200 },
      extraction: { path: 'structured_content' },
      data: answer,
      ...more.exchange,
    },
    history,
  });
}

// --- the storyboard's two create_media_buy steps --------------------------------------------------------------------

describe('canonical_format_satisfaction: the corpus storyboard (canonical_formats.yaml)', () => {
  it('value true: the legacy MREC selector, accepted, satisfies the fixed image declaration after normalisation', () => {
    const verdict = grade({ value: true, packages: [LEGACY_MREC], answer: ACCEPTED });
    expect(verdict).toEqual({
      passed: true,
      json_pointer: '/packages/0/format_ids',
      observations: [
        'packages[0] (product "canonical_formats_mrec_display" from step "get_canonical_product_for_create_satisfaction"): satisfies — format_ids[0] {"agent_url":"https://creative.adcontextprotocol.org/","id":"display_300x250_image"} resolves through format_options[0].v1_format_ref',
      ],
    });
  });

  it('value false: the bare image selector, rejected with UNSUPPORTED_FEATURE at packages[0].format_kind, passes', () => {
    const verdict = grade({ value: false, packages: [BARE_IMAGE], answer: REJECTED_FOR_FORMAT });
    expect(verdict.passed).toBe(true);
    expect(verdict.json_pointer).toBe('/packages/0/format_kind');
    expect(verdict.observations?.[0]).toContain(
      'does not satisfy — format_kind "image" with params {} satisfies no declaration of the product: format_options[0] (canonical_formats_image_mrec): under-specified: the product accepts 300x250, and the selector declares no dimensions',
    );
  });
});

// --- accepted / rejected against the local verdict ------------------------------------------------------------------

describe('canonical_format_satisfaction: the answer against the local verdict', () => {
  it('value true fails when the agent accepts a selector that does not satisfy the product locally', () => {
    const verdict = grade({ value: true, packages: [BARE_IMAGE], answer: ACCEPTED });
    expect(verdict).toMatchObject({
      passed: false,
      json_pointer: '/packages/0/format_kind',
      expected: { accepted: true, local_satisfied: true },
      actual: { accepted: true, local_satisfied: false },
    });
    expect(verdict.error).toMatch(
      /^expected every package's format selector to satisfy its product, but packages\[0\]/,
    );
    expect(verdict.error).toContain('under-specified');
    expect(verdict).not.toHaveProperty('actual.rejection');
  });

  it('value false fails when the agent accepts the unsatisfying selector', () => {
    const verdict = grade({ value: false, packages: [BARE_IMAGE], answer: ACCEPTED });
    expect(verdict).toMatchObject({
      passed: false,
      json_pointer: '/packages/0/format_kind',
      expected: { accepted: false, local_satisfied: false },
      actual: { accepted: true, local_satisfied: false },
      error: 'expected the agent to reject the request for its format selector, but it accepted it',
    });
  });

  it('value true fails when the agent rejects a satisfying selector, pointing at the error code', () => {
    const verdict = grade({ value: true, packages: [LEGACY_MREC], answer: REJECTED_FOR_FORMAT });
    expect(verdict).toMatchObject({
      passed: false,
      json_pointer: '/errors/0/code',
      actual: { accepted: false, local_satisfied: true, rejection: { codes: ['UNSUPPORTED_FEATURE'] } },
    });
    expect(verdict.error).toBe(
      'expected the agent to accept the request, but it rejected it (code UNSUPPORTED_FEATURE; field packages[0].format_kind; message "The product fixes image 300x250; the selector declares no dimensions")',
    );
  });

  it('value false fails when the selector satisfies the product locally, even if the agent rejects it for formats', () => {
    const verdict = grade({ value: false, packages: [LEGACY_MREC], answer: REJECTED_FOR_FORMAT });
    expect(verdict).toMatchObject({ passed: false, actual: { accepted: false, local_satisfied: true } });
    expect(verdict.error).toMatch(
      /^expected a package whose format selector does not satisfy its product, but each one does/,
    );
  });

  it('value must be a boolean', () => {
    expect(grade({ value: 'false' })).toEqual({
      passed: false,
      json_pointer: null,
      expected: 'true or false',
      actual: 'false',
      error:
        'value must be true (the request should be accepted) or false (rejected for its format selector), not "false"',
    });
  });

  it('a request that never got an answer (transport failure) is not an acceptance', () => {
    const verdict = grade({ value: true, exchange: { transportError: 'connection refused', data: undefined } });
    expect(verdict).toMatchObject({
      passed: false,
      actual: { accepted: false, rejection: { messages: ['connection refused'] } },
      error:
        'expected the agent to accept the request, but it rejected it (no error code; message "connection refused")',
    });
  });
});

// --- attribution of a rejection -------------------------------------------------------------------------------------

describe('canonical_format_satisfaction: a negative case passes only on a rejection attributable to formats', () => {
  it.each([
    [
      "the storyboard's UNSUPPORTED_FEATURE with field packages[0].format_kind",
      REJECTED_FOR_FORMAT,
      {},
      'field packages[0].format_kind',
    ],
    [
      'an issue pointer at the selector',
      {
        errors: [
          { code: 'VALIDATION_ERROR', issues: [{ pointer: '/packages/0/format_kind', message: 'under-specified' }] },
        ],
      },
      {},
      'field /packages/0/format_kind',
    ],
    ['a FORMAT_ error code', { adcp_error: { code: 'FORMAT_NOT_SUPPORTED' } }, {}, 'code FORMAT_NOT_SUPPORTED'],
    [
      'an error nested under payload',
      { payload: { errors: [{ code: 'UNSUPPORTED_FEATURE', field: 'packages[0].format_kind' }] } },
      {},
      'field packages[0].format_kind',
    ],
    [
      'details.reason naming formats',
      { errors: [{ code: 'UNSUPPORTED_FEATURE', details: { reason: 'format_option_refs_not_published' } }] },
      {},
      'details.reason format_option_refs_not_published',
    ],
    [
      'a message naming formats, on the MCP error path',
      { adcp_error: { code: 'UNSUPPORTED_FEATURE', message: 'Unsupported format: image needs width and height' } },
      { extraction: { path: 'error' as const, note: 'isError' } },
      'message "Unsupported format: image needs width and height"',
    ],
  ])('%s', (_, answer, exchange, evidence) => {
    const verdict = grade({ value: false, packages: [BARE_IMAGE], answer, exchange });
    expect(verdict.passed).toBe(true);
    // The evidence is reported when it does not carry the verdict: graded as value true, the rejection shows it.
    expect(grade({ value: true, packages: [BARE_IMAGE], answer, exchange }).actual).toMatchObject({
      rejection: { format_evidence: [evidence] },
    });
  });

  it.each([
    ['an auth failure', REJECTED_FOR_AUTH, 'code AUTH_REQUIRED; message "Credentials are missing or expired"'],
    [
      'a tenant failure',
      { adcp_error: { code: 'ACCOUNT_NOT_FOUND', field: 'account', message: 'No such account' } },
      'code ACCOUNT_NOT_FOUND; field account; message "No such account"',
    ],
    [
      // "format" inside another word names no format (the reference runner matches /format/i anywhere).
      'an auth failure whose message holds "format" inside a word',
      { errors: [{ code: 'AUTH_INVALID', message: 'Invalid authentication information' }] },
      'code AUTH_INVALID; message "Invalid authentication information"',
    ],
    [
      'UNSUPPORTED_FEATURE at the package, with nothing naming formats',
      { errors: [{ code: 'UNSUPPORTED_FEATURE', field: 'packages[0]', message: 'Not supported' }] },
      'code UNSUPPORTED_FEATURE; field packages[0]; message "Not supported"',
    ],
  ])('%s fails it', (_, answer, said) => {
    const verdict = grade({ value: false, packages: [BARE_IMAGE], answer });
    expect(verdict).toMatchObject({
      passed: false,
      json_pointer: answer === REJECTED_FOR_AUTH ? '/errors/0/code' : expect.any(String),
      expected: { accepted: false, local_satisfied: false },
      actual: { accepted: false, local_satisfied: false, rejection: { format_evidence: [] } },
    });
    expect(verdict.error).toBe(
      `expected the rejection to name a format cause (a FORMAT_ error code, a field naming the format selector, or a message naming formats), but it names none (${said}): an unrelated rejection does not show the selector was refused`,
    );
  });
});

// --- the product: the most recent prior get_products answer holding it ----------------------------------------------

describe('canonical_format_satisfaction: the product comes from the most recent get_products answer holding it', () => {
  const BROAD_MREC = { ...MREC, format_options: [{ format_kind: 'image', format_option_id: 'any', params: {} }] };

  it('no prior get_products answer fails as a setup error, whatever value says and the agent did', () => {
    const verdict = grade({ value: false, packages: [BARE_IMAGE], answer: REJECTED_FOR_FORMAT, history: [] });
    expect(verdict).toMatchObject({
      passed: false,
      json_pointer: '/packages/0/product_id',
      expected: { accepted: false, local_satisfied: false },
      actual: { accepted: false, local_satisfied: null },
    });
    expect(verdict.error).toBe(
      'expected a get_products answer before this step holding product "canonical_formats_mrec_display" (packages[0]), but no get_products step ran before this one: the storyboard must discover the product before it buys it',
    );
  });

  it('get_products answers that do not hold the product fail it too, and are named', () => {
    const refused: PriorAnswer = { ...discovered('get_refused', []), data: { errors: [{ code: 'AUTH_REQUIRED' }] } };
    const verdict = grade({
      history: [discovered('get_ids_only', [IDS_ONLY]), refused, discovered('get_divergent', [DIVERGENT])],
    });
    expect(verdict.passed).toBe(false);
    expect(verdict.error).toContain('but none of "get_ids_only", "get_refused", "get_divergent" lists it');
  });

  it('a package without a product_id fails as a setup error', () => {
    expect(grade({ packages: [{ format_kind: 'image' }] })).toMatchObject({
      passed: false,
      json_pointer: '/packages/0/product_id',
      error: 'packages[0] has no product_id to find its product by',
    });
  });

  it('the most recent answer holding the product wins over an earlier one, and over a later one without it', () => {
    const history = [
      discovered('get_broad', [BROAD_MREC]),
      discovered('get_fixed', [MREC]),
      discovered('get_other', [IDS_ONLY]),
    ];
    const verdict = grade({ value: true, packages: [BARE_IMAGE], history });
    expect(verdict.passed).toBe(false);
    expect(verdict.error).toContain('from step "get_fixed"');
    expect(grade({ value: true, packages: [BARE_IMAGE], history: history.slice(0, 1) }).passed).toBe(true);
  });

  it('only get_products answers count: a controller seeding answer with products is not discovery', () => {
    const history = [discovered('get_fixed', [MREC]), discovered('seed', [BROAD_MREC], 'comply_test_controller')];
    expect(grade({ value: true, packages: [BARE_IMAGE], history }).error).toContain('from step "get_fixed"');
  });
});

// --- which task, which packages -------------------------------------------------------------------------------------

describe('canonical_format_satisfaction: the step and the packages', () => {
  it('applies to create_media_buy steps only', () => {
    expect(grade({ task: 'update_media_buy' })).toEqual({
      passed: false,
      json_pointer: null,
      expected: 'create_media_buy',
      actual: 'update_media_buy',
      error: 'canonical_format_satisfaction grades create_media_buy steps only; this step calls update_media_buy',
    });
  });

  it('judges every package by default, and `path` selects one package object', () => {
    const packages = [LEGACY_MREC, BARE_IMAGE];
    const all = grade({ value: true, packages });
    expect(all).toMatchObject({ passed: false, json_pointer: '/packages/1/format_kind' });
    expect(all.observations).toHaveLength(2);
    expect(grade({ value: true, packages, path: 'packages[0]' })).toMatchObject({
      passed: true,
      json_pointer: '/packages/0/format_ids',
    });
    expect(grade({ value: false, packages, path: 'packages[1]', answer: REJECTED_FOR_FORMAT }).passed).toBe(true);
  });

  it('a package under a key holding "/" or "~" is named as its path', () => {
    const verdict = grade({ payload: { packages: [], 'lines/~v2': [LEGACY_MREC] }, path: '["lines/~v2"]' });
    expect(verdict.observations?.[0]).toMatch(/^lines\/~v2\[0\] \(product/);
  });

  it('`path` may select a package array, or a wildcard over one', () => {
    const packages = [LEGACY_MREC, BARE_IMAGE];
    expect(grade({ value: true, packages, path: 'packages' })).toMatchObject({
      passed: false,
      json_pointer: '/packages/1/format_kind',
    });
    const payload = { packages: [], plan: { lines: [{ pkg: LEGACY_MREC }, { pkg: LEGACY_MREC }] } };
    const verdict = grade({ value: true, payload, path: 'plan.lines[*].pkg' });
    expect(verdict.passed).toBe(true);
    expect(verdict.observations?.[1]).toMatch(/^plan\.lines\[1\]\.pkg \(product/);
  });

  it.each([
    [
      { path: 'packages[5]' },
      '"packages[5]" selects no package in the request (expected a package object or a non-empty array of them)',
      '/packages/5',
    ],
    [
      { packages: [] },
      'packages[] selects no package in the request (expected a package object or a non-empty array of them)',
      '/packages',
    ],
    [
      { packages: [LEGACY_MREC, 'pkg'] },
      'packages[] selects "pkg" at /packages/1, which is not a package object',
      '/packages/1',
    ],
    [
      { path: 'account.sandbox' },
      '"account.sandbox" selects true at /account/sandbox, which is not a package object',
      '/account/sandbox',
    ],
    [{ payload: 'not json' }, 'the request payload is not an object', null],
  ])('%j fails: no package to judge', (input, error, pointer) => {
    expect(grade(input as Grade)).toEqual({
      passed: false,
      json_pointer: pointer,
      expected: 'a package object or a non-empty array of package objects',
      actual: null,
      error,
    });
  });
});

// --- local satisfaction, selector by selector -----------------------------------------------------------------------

/** The local verdict alone: graded as `value: true` against an accepting agent, it passes exactly when satisfied. */
function local(pkg: Record<string, unknown>): { satisfied: boolean; said: string } {
  const verdict = grade({ packages: [pkg] });
  return { satisfied: verdict.passed, said: [verdict.error ?? '', ...(verdict.observations ?? [])].join('\n') };
}

const onProduct = (p: { product_id: string }, selector: Record<string, unknown>) => ({
  product_id: p.product_id,
  ...selector,
});

describe('canonical_format_satisfaction: legacy format_ids, normalised', () => {
  it.each([
    [
      'the v1_format_ref link (agent_url compared canonicalized)',
      MREC,
      { agent_url: 'HTTPS://Creative.AdContextProtocol.org:443', id: 'display_300x250_image' },
      true,
      'resolves through format_options[0].v1_format_ref',
    ],
    [
      'a registry literal projecting to the fixed size',
      MREC,
      { agent_url: AAO, id: 'display_300x250' },
      true,
      'projects through the v1-canonical registry to image {"width":300,"height":250}, which satisfies format_options[0] (canonical_formats_image_mrec)',
    ],
    [
      'a registry literal projecting to another size',
      MREC,
      { agent_url: AAO, id: 'display_728x90' },
      false,
      "728x90 is not contained in the product's 300x250",
    ],
    [
      'a _2x literal (pixel ratios are opaque in 3.1)',
      MREC,
      { agent_url: AAO, id: 'display_300x250_image_2x' },
      true,
      'image {"width":300,"height":250}',
    ],
    [
      'a parameterized template id',
      MREC,
      { agent_url: AAO, id: 'display_static', width: 300, height: 250 },
      true,
      'which satisfies format_options[0]',
    ],
    [
      'the bare template id: no dimensions',
      MREC,
      { agent_url: AAO, id: 'display_static' },
      false,
      'under-specified: the product accepts 300x250',
    ],
    [
      "another agent's id of the same name: no link, no registry literal",
      MREC,
      { agent_url: 'https://ads.example/', id: 'display_300x250_image' },
      false,
      "is linked by no format_options[].v1_format_ref, has no v1-canonical registry entry, and is not among the product's format_ids[]",
    ],
    [
      'the parameterized variant of the linked id is another format',
      MREC,
      { agent_url: AAO, id: 'display_300x250_image', width: 728, height: 90 },
      false,
      'is linked by no',
    ],
    [
      'the legacy-only product: one of its format_ids',
      IDS_ONLY,
      { agent_url: AAO, id: 'display_728x90_image' },
      true,
      "is one of the legacy-only product's format_ids[]",
    ],
    [
      'the legacy-only product: a format it does not list',
      IDS_ONLY,
      { agent_url: AAO, id: 'display_300x250_image' },
      false,
      'is linked by no',
    ],
    [
      'the divergent product: its linked id',
      DIVERGENT,
      { agent_url: AAO, id: 'display_728x90_image' },
      true,
      'resolves through format_options[0].v1_format_ref',
    ],
    [
      'the divergent product: its unlinked own id (named-format behaviour)',
      DIVERGENT,
      { agent_url: AAO, id: 'display_300x250_image' },
      true,
      "has no canonical projection and is one of the product's format_ids[]",
    ],
    [
      'a registry duration literal against a fixed duration',
      PREROLL,
      { agent_url: AAO, id: 'video_30s' },
      true,
      'video_hosted {"duration_ms_exact":30000}',
    ],
    [
      'a registry duration literal of another duration',
      PREROLL,
      { agent_url: AAO, id: 'video_15s' },
      false,
      "a duration of 15000 ms is not contained in the product's 30000 ms",
    ],
  ])('%s', (_, p, formatId, satisfied, said) => {
    const verdict = local(onProduct(p, { format_ids: [formatId] }));
    expect(verdict.satisfied).toBe(satisfied);
    expect(verdict.said).toContain(said);
  });

  it('a parameterized id is a variant of its own: its width and height are part of the link', () => {
    const template = { agent_url: AAO, id: 'display_static', width: 300, height: 250 };
    const linked = { ...MREC, format_options: [{ ...MREC.format_options[0], v1_format_ref: [template] }] };
    const history = [discovered('get', [linked])];
    const linkedVerdict = grade({ history, packages: [mrecPackage({ format_ids: [template] })] });
    expect(linkedVerdict.observations?.[0]).toContain('resolves through format_options[0].v1_format_ref');
    const wider = grade({ history, packages: [mrecPackage({ format_ids: [{ ...template, width: 728 }] })] });
    expect(wider.passed).toBe(false);
    expect(wider.error).toContain("728x250 is not contained in the product's 300x250");
  });

  it('an agent_url that is no URL compares as written; an option without a format_kind is no declaration', () => {
    const local_ref = { agent_url: 'creative-agent', id: 'house_mrec' };
    const house = {
      ...MREC,
      format_options: [
        { display_name: 'not a declaration' },
        { ...MREC.format_options[0], v1_format_ref: [local_ref] },
      ],
    };
    const history = [discovered('get', [house])];
    expect(grade({ history, packages: [mrecPackage({ format_ids: [local_ref] })] }).observations?.[0]).toContain(
      'resolves through format_options[1].v1_format_ref',
    );
    const other = grade({
      history,
      packages: [mrecPackage({ format_ids: [{ ...local_ref, agent_url: 'other-agent' }] })],
    });
    expect(other.error).toContain('is linked by no format_options[].v1_format_ref');
    expect(grade({ history, packages: [mrecPackage({ format_kind: 'image' })] }).error).toContain(
      'satisfies no declaration of the product: format_options[1] (canonical_formats_image_mrec): under-specified',
    );
  });

  it('a legacy-only product is projected through the registry for a canonical selector', () => {
    const legacy = { product_id: 'legacy_mrec', format_ids: [{ agent_url: AAO, id: 'display_300x250' }] };
    const history = [discovered('get', [legacy])];
    expect(
      grade({
        history,
        packages: [{ product_id: 'legacy_mrec', format_kind: 'image', params: { width: 300, height: 250 } }],
      }),
    ).toMatchObject({
      passed: true,
      observations: [expect.stringContaining('satisfies format_ids[0] (display_300x250, projected)')],
    });
    expect(grade({ history, packages: [{ product_id: 'legacy_mrec', format_kind: 'image' }] }).passed).toBe(false);
    const unprojectable = [discovered('get', [IDS_ONLY])];
    expect(
      grade({
        history: unprojectable,
        packages: [onProduct(IDS_ONLY, { format_kind: 'image', params: { width: 728, height: 90 } })],
      }).error,
    ).toContain('format_kind "image" is outside the product\'s closed set (no canonical declaration)');
  });

  it('format_ids wins over a format_kind beside it, and must be a non-empty array of FormatIds', () => {
    expect(local(mrecPackage({ format_ids: MREC.format_ids, format_kind: 'video_hosted' })).satisfied).toBe(true);
    expect(local(mrecPackage({ format_ids: [] })).said).toContain('format_ids is not a non-empty array');
    expect(local(mrecPackage({ format_ids: ['display_300x250_image'] })).said).toContain(
      'format_ids[0] "display_300x250_image" is not a FormatId { agent_url, id }',
    );
  });
});

describe('canonical_format_satisfaction: format_option_refs', () => {
  it.each([
    [
      'a product-local option',
      MREC,
      [{ scope: 'product', format_option_id: 'canonical_formats_image_mrec' }],
      true,
      'format_option_refs[0] selects format_options[0]',
    ],
    [
      'an option the product does not have',
      MREC,
      [{ scope: 'product', format_option_id: 'canonical_formats_image_leaderboard' }],
      false,
      "selects none of the product's format_options[] (canonical_formats_image_mrec)",
    ],
    [
      'a publisher ref to a product-local option',
      MREC,
      [
        {
          scope: 'publisher',
          publisher_domain: 'outdoormagazine.example',
          format_option_id: 'canonical_formats_image_mrec',
        },
      ],
      false,
      'selects none',
    ],
    [
      'a publisher catalog option',
      PUBLISHER_REELS,
      [{ scope: 'publisher', publisher_domain: 'meta.example', format_option_id: 'meta_reels' }],
      true,
      'selects format_options[0]',
    ],
    [
      'a product ref to a publisher catalog option',
      PUBLISHER_REELS,
      [{ scope: 'product', format_option_id: 'meta_reels' }],
      false,
      '(meta.example/meta_reels, feed_image)',
    ],
    [
      'every ref must resolve',
      PUBLISHER_REELS,
      [
        { scope: 'product', format_option_id: 'feed_image' },
        { scope: 'product', format_option_id: 'stories' },
      ],
      false,
      'format_option_refs[1]',
    ],
    [
      'a publisher ref without its publisher_domain',
      PUBLISHER_REELS,
      [{ scope: 'publisher', format_option_id: 'meta_reels' }],
      false,
      'selects none',
    ],
    ['a ref that is not an object', MREC, ['canonical_formats_image_mrec'], false, 'is not a FormatOptionRef'],
    [
      'a ref without its scope',
      MREC,
      [{ format_option_id: 'canonical_formats_image_mrec' }],
      false,
      'is not a FormatOptionRef (scope "product" or "publisher")',
    ],
    [
      'a legacy-only product',
      IDS_ONLY,
      [{ scope: 'product', format_option_id: 'display_728x90_image' }],
      false,
      'a legacy-format-only product has no closed set',
    ],
    [
      'a product whose options publish no format_option_id',
      NO_OPTION_IDS,
      [{ scope: 'product', format_option_id: 'x' }],
      false,
      '(format_option_refs_not_published)',
    ],
    ['an empty list', MREC, [], false, 'format_option_refs is not a non-empty array'],
  ])('%s', (_, p, refs, satisfied, said) => {
    const verdict = local(onProduct(p, { format_option_refs: refs }));
    expect(verdict.satisfied).toBe(satisfied);
    expect(verdict.said).toContain(said);
  });

  it('format_option_refs wins over format_ids: the seller ignores the legacy hint', () => {
    const refs = [{ scope: 'product', format_option_id: 'canonical_formats_image_mrec' }];
    expect(
      local(mrecPackage({ format_option_refs: refs, format_ids: [{ agent_url: AAO, id: 'video_30s' }] })).satisfied,
    ).toBe(true);
    expect(
      local(
        mrecPackage({
          format_option_refs: [{ scope: 'product', format_option_id: 'no' }],
          format_ids: MREC.format_ids,
        }),
      ).satisfied,
    ).toBe(false);
  });
});

describe('canonical_format_satisfaction: direct selectors — dimensions, durations, ranges, params', () => {
  const image = (params?: Record<string, unknown>) => ({ format_kind: 'image', ...(params ? { params } : {}) });
  it.each([
    // Fixed dimensions: the selector must declare and match them.
    ['fixed: the same size', MREC, image({ width: 300, height: 250 }), true, 'satisfies format_options[0]'],
    [
      'fixed: malformed sizes are no sizes',
      MREC,
      image({ sizes: [{ width: 300 }, '300x250'] }),
      false,
      'under-specified: the product accepts 300x250, and the selector declares no dimensions',
    ],
    [
      'fixed: width only',
      MREC,
      image({ width: 300 }),
      false,
      "width 300, height any is not contained in the product's 300x250",
    ],
    [
      'fixed: another size',
      MREC,
      image({ width: 728, height: 90 }),
      false,
      "728x90 is not contained in the product's 300x250",
    ],
    [
      'fixed: sizes holding only the fixed size',
      MREC,
      image({ sizes: [{ width: 300, height: 250 }] }),
      true,
      'satisfies',
    ],
    [
      'fixed: sizes beyond it',
      MREC,
      image({
        sizes: [
          { width: 300, height: 250 },
          { width: 728, height: 90 },
        ],
      }),
      false,
      '300x250 or 728x90 is not contained',
    ],
    [
      'a kind outside the closed set',
      MREC,
      { format_kind: 'video_hosted', params: { duration_ms_exact: 30000 } },
      false,
      'format_kind "video_hosted" is outside the product\'s closed set (image)',
    ],
    [
      'a broad product accepts a specific selector',
      ANY_SIZE_IMAGE,
      image({ width: 300, height: 250 }),
      true,
      'satisfies format_options[0] (any_size)',
    ],
    ['a broad product accepts a bare one too', ANY_SIZE_IMAGE, image(), true, 'satisfies'],
    // Multi-size products: the selector's sizes are a subset.
    ['sizes: one listed size', MULTI_SIZE, image({ width: 728, height: 90 }), true, 'satisfies'],
    [
      'sizes: an unlisted size',
      MULTI_SIZE,
      image({ width: 320, height: 50 }),
      false,
      "320x50 is not contained in the product's 300x250 or 728x90 or 970x250",
    ],
    [
      'sizes: a degenerate range on a listed size',
      MULTI_SIZE,
      image({ min_width: 728, max_width: 728, min_height: 90, max_height: 90 }),
      true,
      'satisfies',
    ],
    [
      'sizes: a true range, from a listed size',
      MULTI_SIZE,
      image({ min_width: 300, max_width: 728, min_height: 250, max_height: 250 }),
      false,
      "width 300–728, height 250 is not contained in the product's 300x250 or 728x90 or 970x250",
    ],
    ['sizes: none declared', MULTI_SIZE, image(), false, 'under-specified'],
    // Responsive ranges: containment, not overlap.
    [
      'range: an exact size inside',
      RESPONSIVE,
      { format_kind: 'html5', params: { width: 728, height: 90 } },
      true,
      'satisfies',
    ],
    [
      'range: an exact size outside',
      RESPONSIVE,
      { format_kind: 'html5', params: { width: 160, height: 600 } },
      false,
      "160x600 is not contained in the product's width 300–970, height 50–250",
    ],
    [
      'range: a contained range',
      RESPONSIVE,
      { format_kind: 'html5', params: { min_width: 320, max_width: 728, min_height: 50, max_height: 90 } },
      true,
      'satisfies',
    ],
    [
      'range: an overlapping range',
      RESPONSIVE,
      { format_kind: 'html5', params: { min_width: 200, max_width: 728, min_height: 50, max_height: 90 } },
      false,
      'width 200–728, height 50–90 is not contained',
    ],
    [
      'range: one axis only',
      RESPONSIVE,
      { format_kind: 'html5', params: { min_width: 320, max_width: 728 } },
      false,
      'width 320–728, height any is not contained',
    ],
    [
      'range: an open-ended range',
      RESPONSIVE,
      { format_kind: 'html5', params: { min_width: 320, min_height: 50, max_height: 90 } },
      false,
      'width at least 320, height 50–90',
    ],
    // Durations: duration_ms_exact before duration_ms_range, null endpoints unbounded, containment.
    [
      'exact duration: the same',
      PREROLL,
      { format_kind: 'video_hosted', params: { duration_ms_exact: 30000 } },
      true,
      'satisfies',
    ],
    [
      'exact duration: none declared',
      PREROLL,
      { format_kind: 'video_hosted' },
      false,
      'under-specified: the product accepts a duration of 30000 ms, and the selector declares none',
    ],
    [
      'exact duration: another',
      PREROLL,
      { format_kind: 'video_hosted', params: { duration_ms_exact: 15000 } },
      false,
      "a duration of 15000 ms is not contained in the product's 30000 ms",
    ],
    [
      'exact duration: a range around it',
      PREROLL,
      { format_kind: 'video_hosted', params: { duration_ms_range: [15000, 30000] } },
      false,
      'a duration of 15000–30000 ms',
    ],
    [
      'up to 60 s: an exact value inside',
      AUDIO_UP_TO_60S,
      { format_kind: 'audio_hosted', params: { duration_ms_exact: 30000 } },
      true,
      'satisfies',
    ],
    [
      'up to 60 s: an exact value above',
      AUDIO_UP_TO_60S,
      { format_kind: 'audio_hosted', params: { duration_ms_exact: 90000 } },
      false,
      "a duration of 90000 ms is not contained in the product's at most 60000 ms",
    ],
    [
      'up to 60 s: a contained range',
      AUDIO_UP_TO_60S,
      { format_kind: 'audio_hosted', params: { duration_ms_range: [15000, 60000] } },
      true,
      'satisfies',
    ],
    [
      'up to 60 s: an overlapping range',
      AUDIO_UP_TO_60S,
      { format_kind: 'audio_hosted', params: { duration_ms_range: [30000, 90000] } },
      false,
      'a duration of 30000–90000 ms is not contained',
    ],
    [
      'up to 60 s: an unbounded range',
      AUDIO_UP_TO_60S,
      { format_kind: 'audio_hosted', params: { duration_ms_range: [15000, null] } },
      false,
      'a duration of at least 15000 ms is not contained',
    ],
    ['up to 60 s: none declared', AUDIO_UP_TO_60S, { format_kind: 'audio_hosted' }, false, 'under-specified'],
    [
      'up to 60 s: a malformed range is none',
      AUDIO_UP_TO_60S,
      { format_kind: 'audio_hosted', params: { duration_ms_range: ['15s', 30000] } },
      false,
      'under-specified: the product accepts a duration of at most 60000 ms, and the selector declares none',
    ],
    [
      'exact beats range on the product',
      AUDIO_EXACT_BEATS_RANGE,
      { format_kind: 'audio_hosted', params: { duration_ms_exact: 45000 } },
      false,
      "not contained in the product's 30000 ms",
    ],
    // Other canonical params: the selector's value narrows the product's, or the product's is inherited.
    ['params: a stricter max_', MREC, image({ width: 300, height: 250, max_file_size_kb: 150 }), true, 'satisfies'],
    [
      'params: a looser max_',
      MREC,
      image({ width: 300, height: 250, max_file_size_kb: 300 }),
      false,
      "params.max_file_size_kb 300 exceeds the product's 200",
    ],
    ['params: an enum subset', MREC, image({ width: 300, height: 250, image_formats: ['png'] }), true, 'satisfies'],
    [
      'params: an enum value outside',
      MREC,
      image({ width: 300, height: 250, image_formats: ['png', 'gif'] }),
      false,
      'params.image_formats ["png","gif"] lists ["gif"], which the product\'s ["jpg","png"] does not accept',
    ],
    [
      'params: dropping a requirement',
      MREC,
      image({ width: 300, height: 250, ssl_required: false }),
      false,
      "params.ssl_required false is not the product's true",
    ],
    [
      'params: another asset source',
      MREC,
      image({ width: 300, height: 250, asset_source: 'agent_synthesized' }),
      false,
      'params.asset_source "agent_synthesized" is not the product\'s "buyer_uploaded"',
    ],
    [
      'params: asking for a requirement the product leaves off',
      ANY_SIZE_IMAGE,
      image({ ssl_required: true }),
      true,
      'satisfies format_options[0] (any_size)',
    ],
    [
      'params: one the product does not declare',
      MREC,
      image({ width: 300, height: 250, headline_max_chars: 40 }),
      true,
      'satisfies',
    ],
    [
      'params: another value of a plain number',
      AUDIO_UP_TO_60S,
      { format_kind: 'audio_hosted', params: { duration_ms_exact: 30000, loudness_lufs: -23 } },
      false,
      "params.loudness_lufs -23 is not the product's -16",
    ],
    [
      "params: a min_ below the product's",
      MIN_BITRATE,
      { format_kind: 'video_hosted', params: { min_bitrate_kbps: 1000 } },
      false,
      "params.min_bitrate_kbps 1000 is below the product's 2000",
    ],
    [
      'params: composite ones are not compared',
      MREC,
      image({
        width: 300,
        height: 250,
        slots: [{ asset_group_id: 'image_main', asset_type: 'image', required: true, min: 1 }],
      }),
      true,
      'params.slots differs from the product\'s and is composite: not compared ("Narrows": unknown — pass)',
    ],
    [
      'params: not an object',
      MREC,
      { format_kind: 'image', params: 'width=300' },
      false,
      'params "width=300" is not an object',
    ],
    ['format_kind: not a string', MREC, { format_kind: 7 }, false, 'format_kind 7 is not a canonical format kind'],
  ])('%s', (_, p, selector, satisfied, said) => {
    const verdict = local(onProduct(p, selector));
    expect(verdict.satisfied).toBe(satisfied);
    expect(verdict.said).toContain(said);
  });

  it('no selector at all: every format of the product is active', () => {
    expect(local({ product_id: MREC.product_id, budget: 1000 })).toEqual({
      satisfied: true,
      said: '\npackages[0] (product "canonical_formats_mrec_display" from step "get_canonical_product_for_create_satisfaction"): satisfies — no format selector: every format of the product is active (package-request.json)',
    });
  });
});
