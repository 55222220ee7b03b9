/**
 * What the request-signing probes are given (probe.ts, grader.ts), and what they read of the agent's capabilities.
 */
import type { Exchange } from '../../model/exchange.js';
import type { Storyboard, TestKit } from '../../model/storyboard.js';
import type { DigestPolicy } from './build.js';

/** What the agent advertises under `request_signing` (get-adcp-capabilities-response.json). */
export interface AgentSigningCapability {
  coversContentDigest: DigestPolicy;
  requiredFor: string[];
  warnFor: string[];
  /** Absent: every operation's signatures are verified. */
  supportedFor?: string[];
}

export interface RequestSigningOptions {
  storyboard: Storyboard;
  agentUrl: string;
  /** How the agent is reached: the vectors go out as MCP `tools/call` POSTs. */
  protocol: 'mcp' | 'a2a';
  /** The `Authorization` value of the run's default credentials, if any. */
  authorization: () => string | undefined;
  timeoutMs: number;
  maxResponseBytes: number;
  testKit?: TestKit;
  /** The operator opted out of vector 020's flood (runner-output-contract.yaml: `rate_abuse_opt_out`). */
  skipRateAbuse?: boolean;
  /** Asks the agent for its capabilities when the storyboard's capability step did not run. */
  fetchCapabilities: () => Promise<Exchange>;
  /** Unix seconds; default the clock. */
  now?: () => number;
}
