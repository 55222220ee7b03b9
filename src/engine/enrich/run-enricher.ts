/**
 * The request builder as one run uses it (index.ts `enrichRequest`): what the run learnt for it — the agent's
 * products, the storyboard's brand and account, the values captured so far —, the flight anchor fixed at the run's
 * opening, and the runner's own get_products, asked at most once per run.
 */
import { answerError } from '../../model/answer-error.js';
import type { Exchange } from '../../model/exchange.js';
import type { Step, Storyboard, TestKit } from '../../model/storyboard.js';
import type { AgentTransport, CallOptions } from '../../transport/types.js';
import type { AgentTools } from '../gate.js';
import { followAsync, pollingTool } from '../polling.js';
import { FALLBACK_BRAND_DOMAIN } from './create-media-buy.js';
import { declaredFixtureIds, Discovery, enrichRequest, flightAnchor, type CapturedValue } from './index.js';

export interface RunEnricherOptions {
  testKit?: TestKit;
  /** The clock enrichment reads (past flights, the flight anchor). @default Date.now */
  now?: () => number;
  /** Pause between task-status polls of the runner's own get_products. */
  pollIntervalMs: number;
  /** The bound on the runner's own get_products. */
  timeoutMs: number;
  /** The top-level fields of a task's request schema (of the run's AdCP version). */
  requestFields?: (task: string) => readonly string[];
}

export class RunEnricher {
  /** What the run learnt for the request enrichers: the agent's products, the storyboard's brand and account. */
  private readonly discovery = new Discovery();
  /** Values captured by `context_outputs`, with the step that captured each (for unseeded fixture ids). */
  private readonly captured = new Map<string, CapturedValue>();
  private readonly declared: ReadonlySet<string>;
  /** Opening time, fixed for the run: enriched flights start on the next UTC day, the same for every step (replays hash alike). */
  private readonly anchorMs: number;
  /** The runner's own get_products, once per run, when a request needs a product and the storyboard discovered none. */
  private ownDiscovery?: Promise<string | undefined>;

  constructor(
    storyboard: Storyboard,
    private readonly options: RunEnricherOptions,
  ) {
    this.declared = declaredFixtureIds(storyboard);
    this.anchorMs = flightAnchor((options.now ?? Date.now)());
  }

  /** A value a passing step captured (unseeded fixture ids name the step). */
  captures(name: string, value: unknown, stepId: string): void {
    this.captured.set(name, { value, by: stepId });
  }

  observeRequest(payload: unknown): void {
    this.discovery.observeRequest(payload);
  }

  observeAnswer(task: string, exchange: Exchange): void {
    this.discovery.observeAnswer(task, exchange);
  }

  /** The per-task request builder on this step's request, in place: its warning lines. */
  enrich(
    step: { task: string; step: Step; tools: AgentTools },
    payload: Record<string, unknown>,
    transport: AgentTransport,
    callOptions: CallOptions,
  ): Promise<string[]> {
    const brand = (this.options.testKit as { brand?: { house?: { domain?: unknown } } } | undefined)?.brand?.house
      ?.domain;
    return enrichRequest({
      task: step.task,
      step: step.step,
      payload,
      discovery: this.discovery,
      declared: this.declared,
      captured: this.captured,
      ...(typeof brand === 'string' ? { kitBrandDomain: brand } : {}),
      anchorMs: this.anchorMs,
      nowMs: (this.options.now ?? Date.now)(),
      discover: () => (this.ownDiscovery ??= this.discoverProducts(step.tools, transport, callOptions)),
      ...(this.options.requestFields ? { requestFields: this.options.requestFields } : {}),
    });
  }

  /**
   * The runner's own get_products, for a request that needs a product in a
   * storyboard that discovers none (webhook_emission's triggers). Once per run;
   * it says what it asked, so the warning on the step can.
   */
  private async discoverProducts(
    tools: AgentTools,
    transport: AgentTransport,
    callOptions: CallOptions,
  ): Promise<string> {
    if (tools.tools && !tools.tools.has('get_products'))
      return 'the agent has no get_products tool to list products with';
    const brand = this.discovery.sentBrand ?? { domain: FALLBACK_BRAND_DOMAIN };
    const request = { buying_mode: 'brief', brief: 'Any available inventory for a short test flight.', brand };
    const answered = await transport.call('get_products', request, callOptions);
    const { exchange } = await followAsync(
      transport,
      { id: 'runner_discovery', title: 'runner discovery', task: 'get_products' } as Step,
      answered,
      {
        ...callOptions,
        pollTool: pollingTool(tools.tools),
        intervalMs: this.options.pollIntervalMs,
        deadlineMs: this.options.timeoutMs,
      },
    );
    if (exchange.transportError)
      return `the runner's own get_products ${JSON.stringify(request)} failed: ${exchange.transportError}`;
    const refused = answerError(exchange);
    if (refused)
      return `the runner's own get_products ${JSON.stringify(request)} answered an error${refused.code ? ` (${refused.code})` : ''}`;
    this.discovery.observeAnswer('get_products', exchange);
    return `the storyboard discovers no products, so the runner asked get_products itself (${JSON.stringify(request)}) and took the first product it listed`;
  }
}
