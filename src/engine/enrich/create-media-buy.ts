/**
 * create_media_buy, as the storyboards mean it. The corpus writes this task
 * for a runner that completes it from what the run discovered (storyboard-
 * schema.yaml > context_inputs: "AFTER the per-task request builder runs"):
 *
 * - webhook_emission's triggers author only `push_notification_config`,
 *   `idempotency_key` and `context` ("Runner calls the first operation the
 *   capability block advertises as webhook-emitting … passing
 *   push_notification_config.url"): the request schema's required `account`,
 *   `brand`, `start_time`, `end_time` and a package come from the runner;
 * - flights are fixed dates (`2026-04-01…`) that were future when written: a
 *   past flight is moved forward, keeping its length, unless the step's
 *   scenario is `temporal_validation` (the date is then what it tests);
 * - no storyboard authors `bid_price` where the discovered pricing option is
 *   an auction (no `fixed_price`, pricing-options/*.json), which sellers
 *   require: the runner bids the option's guidance median, never below its floor;
 * - a package without a product names the agent's first listed product.
 *
 * What the storyboard wrote is sent as written; only what it left out is
 * filled (dates excepted, as above), and each fill is an Enrichment.
 */
import { isUnseededLiteral } from './fixture-ids.js';
import { isAuction, isObject, preferredOption, type Discovery, type PricingOption, type Product } from './discovery.js';
import type { Enrichment } from './note.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** A flight the runner makes up when the storyboard gives none: a week, starting at the anchor. */
const DEFAULT_FLIGHT_MS = 7 * DAY_MS;
/** A budget where the storyboard gives none and the option names no minimum spend. */
const DEFAULT_BUDGET = 1000;

/** The corpus's own fictional buyer (universal/fictional-entities.yaml), for a storyboard that names none. */
export const FALLBACK_BRAND_DOMAIN = 'acmeoutdoor.example';
const FALLBACK_OPERATOR = 'pinnacle-agency.example';

export interface MediaBuyContext {
  discovery: Discovery;
  /** Brand domain from the storyboard's test kit (`brand.house.domain`), if any. */
  kitBrandDomain?: string;
  /** Ids `fixtures:` entries seed (kept as written). */
  declared: ReadonlySet<string>;
  /** The run's flight anchor: start of the UTC day after the run opened (the same for every step, so replays hash alike). */
  anchorMs: number;
  nowMs: number;
  /** The step's `comply_scenario`. */
  scenario?: string;
  /** Asks the agent for products when the run has discovered none (the runner's own get_products). */
  discover: () => Promise<string | undefined>;
}

export async function enrichCreateMediaBuy(
  request: Record<string, unknown>,
  written: unknown,
  ctx: MediaBuyContext,
): Promise<Enrichment[]> {
  const changes: Enrichment[] = [];
  const authored = isObject(written) ? written : {};

  if (request.proposal_id === undefined) changes.push(...identity(request, ctx));

  changes.push(...flight(request, authored, ctx));

  if (
    request.proposal_id === undefined &&
    (request.packages === undefined || (Array.isArray(request.packages) && request.packages.length === 0))
  ) {
    changes.push(...(await firstProductPackage(request, ctx)));
  } else if (Array.isArray(request.packages)) {
    changes.push(...completePackages(request.packages, authored, ctx));
  }
  return changes;
}

/** brand and account, where the storyboard authored none. */
function identity(request: Record<string, unknown>, ctx: MediaBuyContext): Enrichment[] {
  const changes: Enrichment[] = [];
  const fill = (key: string, value: unknown, reason: string) => {
    request[key] = value;
    changes.push({ path: key, value, reason });
  };
  const brandSource = identitySource(ctx);
  if (request.brand === undefined)
    fill(
      'brand',
      brandSource.brand,
      `the request schema requires brand and the storyboard authored none; ${brandSource.why}`,
    );
  if (request.account === undefined) {
    const account = ctx.discovery.sentAccount ?? {
      brand: brandSource.brand,
      operator: ctx.kitBrandDomain ? String((brandSource.brand as { domain: string }).domain) : FALLBACK_OPERATOR,
    };
    fill(
      'account',
      account,
      `the request schema requires account and the storyboard authored none; ${ctx.discovery.sentAccount ? 'the account this storyboard sent earlier in the run' : `${brandSource.why}, as a natural-key account`}`,
    );
  }
  return changes;
}

/** Identity: what the storyboard itself sent earlier in this run, else its test kit's brand, else the corpus's fictional buyer. */
function identitySource(ctx: MediaBuyContext): { brand: unknown; why: string } {
  return ctx.discovery.sentBrand
    ? { brand: ctx.discovery.sentBrand, why: 'the brand this storyboard sent earlier in the run' }
    : ctx.kitBrandDomain
      ? { brand: { domain: ctx.kitBrandDomain }, why: "the test kit's brand" }
      : {
          brand: { domain: FALLBACK_BRAND_DOMAIN },
          why: "the corpus's fictional buyer (neither the storyboard nor its test kit names a brand)",
        };
}

/** The storyboard authored no packages: one for the agent's first product (discovered now if the run has none). */
async function firstProductPackage(request: Record<string, unknown>, ctx: MediaBuyContext): Promise<Enrichment[]> {
  const productWhy = ctx.discovery.firstProduct()
    ? 'the first product the agent listed in this run'
    : await ctx.discover();
  const product = ctx.discovery.firstProduct();
  if (product) {
    const pkg: Record<string, unknown> = {};
    request.packages = [pkg];
    return fillPackage(pkg, 0, product, undefined, `the storyboard authored no packages; ${productWhy}`);
  }
  return [
    {
      path: 'packages',
      value: undefined,
      reason: `the storyboard authored no packages and the agent listed no product with a pricing option${productWhy ? ` (${productWhy})` : ''}`,
    },
  ];
}

/** Each authored package, completed against the products the run discovered. */
function completePackages(packages: unknown[], authored: Record<string, unknown>, ctx: MediaBuyContext): Enrichment[] {
  const changes: Enrichment[] = [];
  const writtenPackages = Array.isArray(authored.packages) ? authored.packages : [];
  for (const [index, pkg] of packages.entries()) {
    if (!isObject(pkg)) continue;
    const writtenPkg = isObject(writtenPackages[index]) ? writtenPackages[index] : {};
    changes.push(...completePackage(pkg, index, writtenPkg, ctx));
  }
  return changes;
}

/** One package: the agent's own product for a placeholder, else its pricing completed. */
function completePackage(
  pkg: Record<string, unknown>,
  index: number,
  writtenPkg: Record<string, unknown>,
  ctx: MediaBuyContext,
): Enrichment[] {
  let product = ctx.discovery.product(pkg.product_id);
  // Only the authored literal itself: an id fixture-ids.ts already replaced with a captured one stays.
  if (
    !product &&
    (pkg.product_id === undefined ||
      (pkg.product_id === writtenPkg.product_id && isUnseededLiteral(writtenPkg.product_id, ctx.declared))) &&
    ctx.discovery.hasProducts
  ) {
    // A placeholder literal (`test-product`) the agent never listed and no fixture seeds: the agent's own product.
    product = ctx.discovery.firstProduct();
    if (product) {
      return fillPackage(
        pkg,
        index,
        product,
        pkg.product_id,
        pkg.product_id === undefined
          ? 'the package names no product; the first product the agent listed in this run'
          : `the agent listed no product "${String(pkg.product_id)}" in this run and no fixtures: entry seeds it; the first product it listed`,
      );
    }
  }
  if (!product) return [];
  return completePricing(pkg, index, writtenPkg, product, ctx);
}

/** The package's pricing option (the product's preferred one for a placeholder), then its budget and bid. */
function completePricing(
  pkg: Record<string, unknown>,
  index: number,
  writtenPkg: Record<string, unknown>,
  product: Product,
  ctx: MediaBuyContext,
): Enrichment[] {
  const changes: Enrichment[] = [];
  let option: PricingOption | undefined = product.pricing_options.find(
    (o) => o.pricing_option_id === pkg.pricing_option_id,
  );
  if (
    !option &&
    (pkg.pricing_option_id === undefined ||
      (pkg.pricing_option_id === writtenPkg.pricing_option_id &&
        isUnseededLiteral(writtenPkg.pricing_option_id, ctx.declared)))
  ) {
    option = preferredOption(product);
    if (option)
      changes.push(
        setOption(
          pkg,
          index,
          option,
          `product "${product.product_id}" has no pricing option ${pkg.pricing_option_id === undefined ? 'named in the package' : `"${String(pkg.pricing_option_id)}"`}; its ${isAuction(option) ? 'first' : 'first fixed-price'} option`,
        ),
      );
  }
  if (option) changes.push(...priceFields(pkg, index, option));
  return changes;
}

/** A whole package for `product`: its preferred pricing option, a budget, and a bid where the option is an auction. */
function fillPackage(
  pkg: Record<string, unknown>,
  index: number,
  product: Product,
  replacedProduct: unknown,
  why: string,
): Enrichment[] {
  const changes: Enrichment[] = [];
  pkg.product_id = product.product_id;
  changes.push({
    path: `packages[${index}].product_id`,
    value: product.product_id,
    ...(replacedProduct !== undefined ? { replaced: replacedProduct } : {}),
    reason: why,
  });
  const option =
    product.pricing_options.find((o) => o.pricing_option_id === pkg.pricing_option_id) ?? preferredOption(product);
  if (option && pkg.pricing_option_id !== option.pricing_option_id) {
    changes.push(
      setOption(
        pkg,
        index,
        option,
        `product "${product.product_id}"'s ${isAuction(option) ? 'first' : 'first fixed-price'} pricing option`,
      ),
    );
  }
  if (option) changes.push(...priceFields(pkg, index, option));
  return changes;
}

/** Puts `option` on the package, as an Enrichment that names what it replaced. */
function setOption(pkg: Record<string, unknown>, index: number, option: PricingOption, reason: string): Enrichment {
  const replaced = pkg.pricing_option_id;
  pkg.pricing_option_id = option.pricing_option_id;
  return {
    path: `packages[${index}].pricing_option_id`,
    value: option.pricing_option_id,
    ...(replaced !== undefined ? { replaced } : {}),
    reason,
  };
}

/** budget where the package has none; bid_price where the option is an auction and the package bids nothing. */
function priceFields(pkg: Record<string, unknown>, index: number, option: PricingOption): Enrichment[] {
  const changes: Enrichment[] = [];
  const id = String(option.pricing_option_id);
  if (pkg.budget === undefined) {
    const minimum = typeof option.min_spend_per_package === 'number' ? option.min_spend_per_package : 0;
    pkg.budget = Math.max(DEFAULT_BUDGET, minimum);
    changes.push({
      path: `packages[${index}].budget`,
      value: pkg.budget,
      reason:
        minimum > DEFAULT_BUDGET
          ? `the package has no budget; pricing option "${id}"'s min_spend_per_package`
          : `the package has no budget; ${DEFAULT_BUDGET}, above pricing option "${id}"'s minimum spend`,
    });
  }
  if (pkg.bid_price === undefined && isAuction(option)) {
    const bid = bidFor(option);
    if (bid !== undefined) {
      pkg.bid_price = bid.value;
      changes.push({
        path: `packages[${index}].bid_price`,
        value: bid.value,
        reason: `pricing option "${id}" is an auction (no fixed_price) and the storyboard authored no bid_price; ${bid.why}`,
      });
    } else {
      changes.push({
        path: `packages[${index}].bid_price`,
        value: undefined,
        reason: `pricing option "${id}" is an auction but gives neither floor_price nor price_guidance to bid from`,
      });
    }
  }
  return changes;
}

function bidFor(option: PricingOption): { value: number; why: string } | undefined {
  const floor = typeof option.floor_price === 'number' ? option.floor_price : undefined;
  const median =
    isObject(option.price_guidance) && typeof option.price_guidance.p50 === 'number'
      ? option.price_guidance.p50
      : undefined;
  if (median !== undefined && (floor === undefined || median >= floor))
    return { value: median, why: 'its price_guidance median (p50)' };
  if (floor !== undefined) return { value: floor, why: 'its floor_price (the lowest bid it accepts)' };
  return undefined;
}

/**
 * start_time / end_time: added when absent; moved forward, keeping the authored
 * length, when the authored start is in the past — unless the step tests dates.
 */
function flight(
  request: Record<string, unknown>,
  authored: Record<string, unknown>,
  ctx: MediaBuyContext,
): Enrichment[] {
  if (ctx.scenario === 'temporal_validation') return [];
  const changes: Enrichment[] = [];
  const start = request.start_time;
  const end = request.end_time;
  const startMs = typeof start === 'string' ? Date.parse(start) : NaN;
  const endMs = typeof end === 'string' ? Date.parse(end) : NaN;
  const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
  if (start === undefined) {
    request.start_time = iso(ctx.anchorMs);
    changes.push({
      path: 'start_time',
      value: request.start_time,
      reason: 'the request schema requires start_time and the storyboard authored none; the start of the next UTC day',
    });
  } else if (Number.isFinite(startMs) && startMs < ctx.nowMs && typeof authored.start_time === 'string') {
    request.start_time = iso(ctx.anchorMs);
    changes.push({
      path: 'start_time',
      value: request.start_time,
      replaced: start,
      reason:
        'the authored flight starts in the past (the corpus dates were future when written) and a seller may refuse a past flight; moved to the start of the next UTC day',
    });
    if (Number.isFinite(endMs) && endMs > startMs && typeof authored.end_time === 'string') {
      request.end_time = iso(ctx.anchorMs + (endMs - startMs));
      changes.push({
        path: 'end_time',
        value: request.end_time,
        replaced: end,
        reason: 'moved with start_time, keeping the authored flight length',
      });
    }
  }
  if (request.end_time === undefined) {
    const from = Date.parse(String(request.start_time));
    request.end_time = iso((Number.isFinite(from) ? from : ctx.anchorMs) + DEFAULT_FLIGHT_MS);
    changes.push({
      path: 'end_time',
      value: request.end_time,
      reason: 'the request schema requires end_time and the storyboard authored none; a week after start_time',
    });
  }
  return changes;
}
