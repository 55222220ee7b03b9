/**
 * Human-readable failure text for a step: what was checked (the author's
 * description and its YAML line), where (JSON Pointer), expected vs actual,
 * what was sent and what came back. Agent-controlled text is fenced and known
 * secrets are scrubbed (runner-output-contract.yaml > security).
 */
import { relative } from 'node:path';
import type { ResponseRecord, StepResult, ValidationResult } from '../engine/records.js';
import { extractMcpResult } from '../transport/mcp.js';
import { escapeControl, escapeControlDeep, fence, redactPayload, scrubSecrets, scrubSecretsDeep } from './redact.js';

/** Checks whose reason text carries agent-controlled content (instance paths, codes, messages). */
const AGENT_TEXT_CHECKS = new Set(['response_schema', 'error_code']);

/**
 * What the storyboard's paths were read against: the task result, not the
 * whole MCP envelope (which repeats it as text). The full envelope stays in
 * the record.
 */
function taskResult(response: ResponseRecord): unknown {
  const payload = response.payload as Record<string, unknown> | undefined;
  if (response.transport === 'mcp' && payload && typeof payload === 'object' && ('structuredContent' in payload || 'content' in payload)) {
    const { data } = extractMcpResult(payload);
    if (data !== undefined) return data;
  }
  return payload;
}

const MAX_JSON_CHARS = 1_500;

export interface FormattedFailure {
  message: string;
  /** For the diff of the first failed validation that has both. */
  expected?: unknown;
  actual?: unknown;
}

function json(value: unknown, max = MAX_JSON_CHARS): string {
  let text: string;
  try {
    text = JSON.stringify(redactPayload(value), null, 2) ?? 'undefined';
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}\n… (${text.length - max} more characters; full record in the test meta / contract report)` : text;
}

function where(v: ValidationResult, cwd: string): string {
  return v.source ? `${relative(cwd, v.source.file) || v.source.file}:${v.source.line}:${v.source.column}` : '';
}

function indent(text: string, by = '    '): string {
  return text
    .split('\n')
    .map((line) => by + line)
    .join('\n');
}

export function formatStepFailure(result: StepResult, options: { secrets?: readonly string[]; cwd?: string } = {}): FormattedFailure {
  const cwd = options.cwd ?? process.cwd();
  const lines: string[] = [];
  const failed = result.validations.filter((v) => !v.passed);
  if (result.error) {
    lines.push(`step "${result.step_id}" (task ${result.task}) failed: ${fence(result.error, 'error')}`);
  }
  if (result.optional) lines.push(`(optional phase "${result.phase_id}": this failure alone does not fail the storyboard)`);
  for (const warning of result.warnings ?? []) lines.push(`warning: ${warning}`);
  if (failed.length > 0) {
    lines.push(`${failed.length} of ${result.validations.length} validation${result.validations.length === 1 ? '' : 's'} failed in step "${result.step_id}" (task ${result.task}):`);
  }
  for (const v of failed) {
    lines.push(`  ✗ ${v.description} [${v.check}]${v.source ? ` at ${where(v, cwd)}` : ''}`);
    if (v.json_pointer !== undefined && v.json_pointer !== null) lines.push(`    at JSON Pointer ${v.json_pointer === '' ? '"" (the whole response)' : v.json_pointer}`);
    if (v.error) lines.push(indent(AGENT_TEXT_CHECKS.has(v.check) ? fence(v.error, 'reason') : v.error));
    if (v.check === 'response_schema' && v.schema_id) lines.push(`    schema ${v.schema_id} (${v.schema_url})`);
    if (v.expected !== undefined) lines.push(`    expected: ${json(v.expected, 300)}`);
    if (v.actual !== undefined && v.check !== 'response_schema') {
      // Only strings (or structures holding them) can carry agent-planted text.
      const text = json(v.actual, 300);
      lines.push(`    actual:   ${typeof v.actual === 'object' && v.actual !== null || typeof v.actual === 'string' ? fence(text, 'agent value') : text}`);
    }
  }
  if (result.request) {
    lines.push(`  sent (${result.request.transport} ${result.request.operation}${result.request.url ? ` → ${result.request.url}` : ''}):`);
    lines.push(indent(json(result.request.payload)));
  }
  if (result.response) {
    const status = result.response.status !== undefined ? ` HTTP ${result.response.status}` : '';
    lines.push(`  received (${result.extraction.path}${status}${result.response.duration_ms !== undefined ? `, ${result.response.duration_ms} ms` : ''}):`);
    lines.push(indent(fence(json(taskResult(result.response)), 'agent response')));
  } else if (result.request) {
    lines.push('  received: nothing (no response from the agent)');
  }
  const diffable = failed.find((v) => v.expected !== undefined && v.actual !== undefined && v.check !== 'response_schema');
  const secrets = options.secrets ?? [];
  // The diff is rendered beside the message: the same redaction and scrubbing.
  // Vitest prints the diff raw: control characters escaped there too.
  const safe = (value: unknown) => escapeControlDeep(scrubSecretsDeep(redactPayload(value), secrets));
  return {
    // Agent text is fenced (and escaped) above; runner text quotes agent-supplied names too (tools, ids), so escape it all.
    message: escapeControl(scrubSecrets(lines.join('\n'), secrets)),
    ...(diffable ? { expected: safe(diffable.expected), actual: safe(diffable.actual) } : {}),
  };
}
