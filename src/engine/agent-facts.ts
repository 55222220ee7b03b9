/**
 * What one run learns about the agent before it grades anything, each asked at most once per run: its tool list
 * (`tools/list`, or the A2A card's skills), its get_adcp_capabilities answer (shared by the runs of a process through
 * `RunSettings.capabilities`), its controller's `list_scenarios`, and — from those — the verdict of the storyboard-level
 * gates (applicability.ts). run.ts asks; this module keeps the answers.
 */
import { answerError } from '../model/answer-error.js';
import type { ContractRules } from '../model/contract-rules.js';
import type { SkipResult } from '../model/records.js';
import type { Storyboard } from '../model/storyboard.js';
import type { AgentTransport, Credentials } from '../transport/types.js';
import {
  CAPABILITIES_RESPONSE,
  storyboardGate,
  storyboardRequirements,
  type AgentCapabilities,
} from './applicability.js';
import type { AgentTools } from './gate.js';
import type { RunSettings } from './run-settings.js';
import { listScenarios } from './upstream.js';

const CAPABILITIES_TASK = 'get_adcp_capabilities';

export class AgentFacts {
  private tools?: Promise<AgentTools>;
  private capabilities?: Promise<AgentCapabilities>;
  private applicability?: Promise<SkipResult | undefined>;
  private scenarios?: Promise<string[] | { error: string }>;
  /** Whether the storyboard has 3.1 storyboard-level gates at all. */
  readonly gated: boolean;

  constructor(
    private readonly storyboard: Storyboard,
    private readonly settings: RunSettings,
    private readonly rules: ContractRules,
    /** The run's transport (opened by then) and default credentials. */
    private readonly agent: () => { transport: AgentTransport; credentials: Credentials },
  ) {
    this.gated = Boolean(
      storyboard.requires_capability ||
      storyboard.required_any_of_tools?.length ||
      storyboardRequirements(storyboard, rules).length,
    );
  }

  /** The agent's tools, listed once per run. */
  agentTools(): Promise<AgentTools> {
    this.tools ??= (async () => {
      const { transport, credentials } = this.agent();
      const listed = await transport.listTools({ credentials, timeoutMs: this.settings.timeoutMs });
      return 'tools' in listed ? { tools: new Set(listed.tools) } : { error: listed.error };
    })().catch((error): AgentTools => ({ error: error instanceof Error ? error.message : String(error) }));
    return this.tools;
  }

  /** The agent's get_adcp_capabilities answer: the opener's shared one, else asked once by this run. */
  agentCapabilities(tools: AgentTools): Promise<AgentCapabilities> {
    const ask = async (): Promise<AgentCapabilities> => {
      if (tools.tools && !tools.tools.has(CAPABILITIES_TASK))
        return { error: `the agent does not advertise ${CAPABILITIES_TASK}` };
      const { transport, credentials } = this.agent();
      const exchange = await transport.call(CAPABILITIES_TASK, {}, { credentials, timeoutMs: this.settings.timeoutMs });
      if (exchange.transportError) return { error: exchange.transportError };
      const failure = answerError(exchange);
      if (failure) return { error: `the agent answered with an error${failure.code ? ` ${failure.code}` : ''}` };
      return { data: exchange.data };
    };
    this.capabilities ??= (this.settings.capabilities ? this.settings.capabilities(ask) : ask()).catch(
      (error): AgentCapabilities => ({ error: error instanceof Error ? error.message : String(error) }),
    );
    return this.capabilities;
  }

  /** The storyboard-level gates (applicability.ts), evaluated once per run. */
  storyboardGate(tools: AgentTools): Promise<SkipResult | undefined> {
    this.applicability ??= (async () =>
      storyboardGate(
        this.storyboard,
        tools,
        this.storyboard.requires_capability ? await this.agentCapabilities(tools) : undefined,
        { webhookReceiver: this.settings.webhooks !== undefined, seededState: this.settings.seededState === true },
        this.rules,
        this.capabilityDefault,
      ))();
    return this.applicability;
  }

  /** What the capabilities schema says an absent field means (the `requires_capability` value matchers read it). */
  readonly capabilityDefault = (path: string): unknown => this.settings.schemas?.defaultAt(CAPABILITIES_RESPONSE, path);

  /** The agent's controller scenarios (`list_scenarios`), asked once per run when a check needs them. */
  controllerScenarios(): Promise<string[] | { error: string }> {
    const { transport, credentials } = this.agent();
    this.scenarios ??= listScenarios(transport, credentials, this.settings.timeoutMs);
    return this.scenarios;
  }
}
