/**
 * What the engine learnt of the agent's upstream traffic for one step, for `upstream_traffic` (storyboard-schema.yaml
 * > Upstream side-effects; runner-output-contract.yaml 2.6.0 > notes.upstream_traffic_*): the agent's
 * comply_test_controller answers `query_upstream_traffic` when it lists that scenario (`list_scenarios`); the engine
 * asks it after the step (engine/upstream.ts) and the check grades what came back. Plain data: it crosses to a worker.
 */
import type { RequestRecord, ResponseRecord } from '../model/records.js';

/** One outbound call as the controller reports it (comply-test-controller-response.json > UpstreamTrafficSuccess). */
export interface RecordedCall {
  method?: string;
  /** `<METHOD> <URL>`, what `endpoint_pattern` matches. */
  endpoint?: string;
  url?: string;
  host?: string;
  path?: string;
  content_type?: string;
  attestation_mode?: 'raw' | 'digest' | (string & {});
  purpose?: string;
  timestamp?: string;
  /** raw mode. */
  payload?: unknown;
  /** digest mode. */
  payload_digest_sha256?: string;
  payload_length?: number;
  identifier_match_proofs?: { digest?: string; found?: boolean }[];
}

export type UpstreamObservation =
  /** The controller does not list `query_upstream_traffic`, or the agent has no controller: not applicable. */
  | { status: 'not_advertised'; detail: string }
  /** `since: <step>` names no earlier step of the run with a request time: an authoring error. */
  | { status: 'unresolved_since'; since: string }
  /** The query did not answer with calls: the transport's or the controller's error. */
  | {
      status: 'failed';
      error: string;
      /** The controller answered JCS_NON_FINITE_NUMBER (a digest it could not compute): not applicable. */
      nonFinite?: boolean;
      request?: RequestRecord;
      response?: ResponseRecord;
    }
  | {
      status: 'observed';
      request: RequestRecord;
      response: ResponseRecord;
      calls: RecordedCall[];
      /** The query's `since_timestamp` (the window's inclusive lower bound, skew already subtracted). */
      since: string;
      /** digest mode: the SHA-256 (hex) the engine sent per identifier value. */
      digests?: Record<string, string>;
    };
