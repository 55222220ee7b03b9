import type { SchemaRegistry } from '../schemas/registry.js';
import type { Step, Validation } from '../model/storyboard.js';
import type { Exchange } from '../model/exchange.js';
import type { ValidationResult } from '../model/records.js';

export interface CheckInput {
  validation: Validation;
  step: Step;
  /** The task actually invoked (after test-kit resolution). */
  task: string;
  exchange: Exchange;
  schemas?: SchemaRegistry;
  /** The run's context accumulator (captures + storyboard-root `context:`), for checks that read it (`refs_resolve`). */
  context?: ReadonlyMap<string, unknown>;
  /** The URL of the agent under test (`$agent_url` in `refs_resolve` scopes). */
  agentUrl?: string;
}

/** A check returns the contract fields it knows; the engine adds check, description, source, request and response. */
export type CheckVerdict = Omit<ValidationResult, 'check' | 'description' | 'request' | 'response' | 'source'>;

export type Check = (input: CheckInput) => CheckVerdict;
