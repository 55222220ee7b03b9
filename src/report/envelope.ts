/**
 * The run envelope of the contract report (the contract leaves the outer
 * envelope to the runner): which agent was tested, over which protocol, from
 * which Vitest project, against which corpus, by which vitest-adcp, and when.
 * A report handed to AdCP tooling must say what it is a report of.
 */
import { resolveRuntimeConfig, type RuntimeConfig } from '../config.js';
import { ownVersion } from '../model/package-version.js';
import { REDACTED, secretsInUrl } from '../model/redact.js';

/** What a storyboard's records say about the agent they tested (set in the worker, from the run configuration). */
export interface RunTarget {
  agent_url: string | null;
  protocol: 'mcp' | 'a2a';
  corpus_version: string | null;
}

/** An agent URL fit for a report: a password in it, and credential-named query values (`?api_key=`), replaced. */
export function publicAgentUrl(url: string | undefined): string | null {
  if (!url) return null;
  let out = url;
  for (const secret of secretsInUrl(url)) out = out.split(secret).join(REDACTED);
  return out;
}

/** The run target of a worker's configuration (with the same environment fallbacks the engine uses). */
export function runTarget(config: RuntimeConfig, env: NodeJS.ProcessEnv = process.env): RunTarget {
  const resolved = resolveRuntimeConfig(config, env);
  return {
    agent_url: publicAgentUrl(resolved.agentUrl),
    protocol: resolved.protocol,
    corpus_version: config.corpusVersion ?? null,
  };
}

/** This package's version, as the report names its runner and tool. */
export const toolVersion = ownVersion;

/** One agent a run tested: a Vitest project × agent URL × protocol. */
export interface RunTargetReport {
  /** The Vitest project's name (`vitest-adcp` for the project the plugin adds; `''` for an unnamed root project). */
  project: string;
  agent_url: string | null;
  protocol: 'mcp' | 'a2a' | null;
  corpus_version: string | null;
}

export interface RunEnvelope {
  started_at: string;
  finished_at: string;
  duration_ms: number;
  /** Set when the run tested exactly one agent from one project; `null` otherwise (see `targets`). */
  agent_url: string | null;
  protocol: 'mcp' | 'a2a' | null;
  project: string | null;
  /** The corpus version when every target used the same one; `null` otherwise (or none known). */
  corpus_version: string | null;
  /**
   * Why the run took that corpus (`the version @adcp/sdk 13.0.0 pins`, `named, fetched from …`), when every project
   * says the same; `null` otherwise. Written from contract 2.6.0 on (a 1.1.0 report keeps the envelope it always had).
   */
  corpus_choice?: string | null;
  tool: { name: 'vitest-adcp'; version: string };
  /** Every project × agent the run tested; each storyboard entry names its own. */
  targets: RunTargetReport[];
  /**
   * `false` when some planned step did not run (a `-t` / line filter, a cancelled run): the report then covers a
   * subset, and no storyboard with an unrun step is called passed.
   */
  complete: boolean;
  /** The test name filter (`-t`) the run was given, if any. */
  test_name_pattern: string | null;
}

export interface RunTimes {
  started_at: string;
  finished_at: string;
  test_name_pattern?: string | null;
}

export function buildEnvelope(
  targets: RunTargetReport[],
  times: RunTimes,
  complete: boolean,
  corpusChoices: readonly (string | null | undefined)[] = [],
): RunEnvelope {
  const only = targets.length === 1 ? targets[0]! : undefined;
  const versions = [...new Set(targets.map((t) => t.corpus_version).filter((v): v is string => v !== null))];
  const choices = [...new Set(corpusChoices.filter((c): c is string => typeof c === 'string' && c !== ''))];
  return {
    started_at: times.started_at,
    finished_at: times.finished_at,
    duration_ms: Math.max(0, Date.parse(times.finished_at) - Date.parse(times.started_at)) || 0,
    agent_url: only?.agent_url ?? null,
    protocol: only?.protocol ?? null,
    project: only?.project ?? null,
    corpus_version: versions.length === 1 ? versions[0]! : null,
    corpus_choice: choices.length === 1 && versions.length <= 1 ? choices[0]! : null,
    tool: { name: 'vitest-adcp', version: toolVersion() },
    targets,
    complete,
    test_name_pattern: times.test_name_pattern ?? null,
  };
}
