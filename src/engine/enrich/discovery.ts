/**
 * What a storyboard run has learnt from the agent and from its own requests,
 * for the request enrichers: the products the agent listed (get_products
 * answers that were not errors), and the brand and account the storyboard
 * itself sent. Bounded, and scoped to one run like the context accumulator.
 */
import { answerError } from '../../model/answer-error.js';
import type { Exchange } from '../../model/exchange.js';
import { isPlainObject as isObject } from '../../model/path.js';

const MAX_PRODUCTS = 200;

export interface PricingOption {
  pricing_option_id?: unknown;
  pricing_model?: unknown;
  fixed_price?: unknown;
  floor_price?: unknown;
  price_guidance?: { p50?: unknown } | null;
  min_spend_per_package?: unknown;
  [key: string]: unknown;
}

export interface Product {
  product_id: string;
  pricing_options: PricingOption[];
}

export class Discovery {
  private readonly products = new Map<string, Product>();
  /** The brand / account objects the storyboard sent first in this run. */
  sentBrand?: Record<string, unknown>;
  sentAccount?: Record<string, unknown>;

  /** A request the runner sent (its brand and account are the storyboard's). */
  observeRequest(payload: unknown): void {
    if (!isObject(payload)) return;
    if (!this.sentBrand && isObject(payload.brand) && typeof payload.brand.domain === 'string')
      this.sentBrand = payload.brand;
    if (!this.sentAccount && isObject(payload.account) && Object.keys(payload.account).length > 0)
      this.sentAccount = payload.account;
  }

  /** An answer to `task`: the products of a get_products answer that was not an error. */
  observeAnswer(task: string, exchange: Pick<Exchange, 'data' | 'extraction' | 'rpcError' | 'transportError'>): void {
    if (task !== 'get_products' || exchange.transportError || answerError(exchange)) return;
    const data = exchange.data;
    if (!isObject(data) || !Array.isArray(data.products)) return;
    for (const product of data.products) {
      if (this.products.size >= MAX_PRODUCTS) break;
      if (!isObject(product) || typeof product.product_id !== 'string') continue;
      const options = Array.isArray(product.pricing_options) ? product.pricing_options.filter(isObject) : [];
      if (!this.products.has(product.product_id))
        this.products.set(product.product_id, { product_id: product.product_id, pricing_options: options });
    }
  }

  get hasProducts(): boolean {
    return this.products.size > 0;
  }

  product(id: unknown): Product | undefined {
    return typeof id === 'string' ? this.products.get(id) : undefined;
  }

  /** The agent's first listed product that has a pricing option (agents list in their own order of relevance). */
  firstProduct(): Product | undefined {
    for (const product of this.products.values()) if (product.pricing_options.length > 0) return product;
    return undefined;
  }
}

export { isPlainObject as isObject } from '../../storyboard/paths.js';

/** AdCP 3.0 pricing options: "If fixed_price is present, it's fixed pricing. If absent, it's auction-based." */
export function isAuction(option: PricingOption): boolean {
  return option.fixed_price === undefined || option.fixed_price === null;
}

/** A fixed-price option where the product has one (no bid to invent), else its first. */
export function preferredOption(product: Product): PricingOption | undefined {
  return product.pricing_options.find((o) => !isAuction(o)) ?? product.pricing_options[0];
}
