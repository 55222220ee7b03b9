/**
 * The runner-output contract's MCP extraction: what a `tools/call` result answered, and by which path
 * (`structured_content`, `text_fallback`, `error`, `none`). The transport records it; the report's views and the
 * matchers read recorded results through the same function (a2a-extract.ts is A2A's).
 */
import { isErrorOnly } from '../model/answer-error.js';
import type { ExtractionRecord } from '../model/records.js';

/**
 * The contract's MCP extraction: structuredContent when it is an object;
 * otherwise the first text content that parses as a JSON object; an error
 * envelope (`adcp_error`, or `isError: true`) takes the error path.
 */
export function extractMcpResult(result: { isError?: boolean; structuredContent?: unknown; content?: unknown }): {
  extraction: ExtractionRecord;
  data: unknown;
} {
  const structured = result.structuredContent;
  if (structured && typeof structured === 'object' && !Array.isArray(structured)) {
    const record = structured as Record<string, unknown>;
    if (result.isError || isErrorOnly(record)) {
      return {
        extraction: {
          path: 'error',
          note: result.isError
            ? 'isError: true with structuredContent'
            : 'structuredContent contained only adcp_error — treated as error',
        },
        data: structured,
      };
    }
    return { extraction: { path: 'structured_content' }, data: structured };
  }
  const texts = Array.isArray(result.content)
    ? result.content.filter(
        (c: { type?: unknown; text?: unknown } | null | undefined) => c?.type === 'text' && typeof c.text === 'string',
      )
    : [];
  for (const item of texts as { text: string }[]) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(item.text);
    } catch {
      continue;
    }
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const record = parsed as Record<string, unknown>;
      if (result.isError || isErrorOnly(record)) {
        return {
          extraction: { path: 'error', note: 'error envelope in content[].text (no structuredContent)' },
          data: parsed,
        };
      }
      return {
        extraction: { path: 'text_fallback', note: 'no structuredContent; parsed JSON from content[].text' },
        data: parsed,
      };
    }
  }
  if (result.isError) {
    const message = (texts as { text: string }[]).map((t) => t.text).join('\n');
    return { extraction: { path: 'error', note: 'isError: true without a JSON body' }, data: { message } };
  }
  return { extraction: { path: 'none', note: 'neither structuredContent nor JSON text content' }, data: undefined };
}
