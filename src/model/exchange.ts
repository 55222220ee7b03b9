import type { ExtractionRecord, RequestRecord, ResponseRecord } from './records.js';

/** What one call to the agent produced, as the transports report it. */
export interface Exchange {
  request: RequestRecord;
  /** Absent only when the transport failed before any answer arrived. */
  response?: ResponseRecord;
  extraction: ExtractionRecord;
  /** The task result the storyboard paths resolve against (structuredContent, parsed text, or error data). */
  data: unknown;
  /**
   * The protocol envelope, where a transport keeps it apart from `data`. MCP and A2A: absent — the envelope
   * fields (`status`, `task_id`, …) ride in the task result itself (structuredContent; the A2A DataPart, per the
   * AdCP A2A binding), so the envelope is `data`. The A2A Task itself is `response.payload`.
   */
  envelope?: unknown;
  /** Transport-level failure (timeout, connection refused, oversize body, protocol error). */
  transportError?: string;
  /** JSON-RPC error data, when the agent answered the call with a JSON-RPC error. */
  rpcError?: { code: number; message: string; data?: unknown };
}
