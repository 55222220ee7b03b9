/**
 * The run configuration the workers read (`project.provide('vitestAdcp', …)`, runtime/ and config.ts): the agent,
 * bounds, corpus, schemas, cache directory, test kit directories and the webhook receiver hosted for the run.
 */
import { resolve } from 'node:path';
import type { TestProject, VitestPluginContext } from 'vitest/node';
import { userCacheRoot } from '../cache/disk-cache.js';
import { defaultCacheDir } from '../cache/location.js';
import type { RuntimeConfig } from '../config.js';
import type { Corpus } from '../corpus.js';
import { absoluteJwksLocation } from '../webhooks/operator-jwks.js';
import { resolveWebhookReceiver } from '../webhooks/options.js';
import { HostedWebhookReceiver } from '../webhooks/remote.js';
import type { AdcpStoryboardsOptions } from './options.js';
import { RunHost } from './run-host.js';
import type { PluginState } from './state.js';
import { agentGiven } from './storyboard-files.js';

/**
 * The `cacheDir` option resolved; undefined when off. Default (cache/location.ts): `vitest-adcp/` in the project's Vite
 * cache directory inside a package, this user's OS cache directory outside any.
 */
export function runtimeCacheDir(
  options: AdcpStoryboardsOptions,
  root: string,
  project: TestProject,
): string | undefined {
  return options.cacheDir === false
    ? undefined
    : options.cacheDir !== undefined
      ? resolve(root, options.cacheDir)
      : defaultCacheDir(root, project.vite.config.cacheDir);
}

/** Hands the workers their configuration, with the run's webhook receiver (started once) when one is asked for. */
export async function provideRunConfig(
  state: PluginState,
  vitest: VitestPluginContext['vitest'],
  project: TestProject,
  fallback: Corpus | undefined,
  cacheDir: string | undefined,
): Promise<void> {
  const runtimeConfig = runtimeConfigFor(state, fallback, cacheDir);
  const receiverOptions = resolveWebhookReceiver(state.options.webhooks);
  if (receiverOptions) {
    if (!state.webhookReceiver) {
      const starting = HostedWebhookReceiver.start(receiverOptions);
      state.webhookReceiver = starting;
      vitest.onClose(async () => (await starting).close());
    }
    runtimeConfig.webhooks = (await state.webhookReceiver).config;
  }
  if (!state.runHost) {
    const starting = RunHost.start();
    state.runHost = starting;
    vitest.onClose(async () => (await starting).close());
    cancelHostWithEachRun(vitest, starting);
  }
  runtimeConfig.runHost = (await state.runHost).config;
  runtimeConfig.userCacheRoot = userCacheRoot();
  project.provide('vitestAdcp', stripUndefined(runtimeConfig));
}

/**
 * Vitest's cancel (its cancel key, the bin's first SIGINT/SIGTERM) reaches the run host. Vitest forgets its onCancel
 * listeners as each run starts (runFiles clears them, after onTestRunStart), so a listener added once heard no cancel:
 * the host's runs went on, and the bin waited out the step in flight (issue 31 item 10). It is added again when each
 * run's first file is queued; a cancel made before that (during the preflight) is seen then, in `isCancelling`.
 */
function cancelHostWithEachRun(vitest: VitestPluginContext['vitest'], host: Promise<RunHost>): void {
  let listening = false;
  const cancel = async () => (await host).cancel();
  (vitest.config.reporters as unknown[]).push({
    onTestRunStart: () => {
      listening = false;
    },
    onTestModuleQueued: () => {
      if (listening) return;
      listening = true;
      vitest.onCancel(cancel);
      if ((vitest as { isCancelling?: boolean }).isCancelling) void cancel();
    },
  });
}

function runtimeConfigFor(
  { options, root, kitRoot, agentLogFile }: PluginState,
  fallback: Corpus | undefined,
  cacheDir: string | undefined,
): RuntimeConfig {
  return {
    ...agentGiven({ options }),
    corpusRoot: kitRoot,
    corpusVersion: fallback?.version,
    corpusChoice: fallback?.choice,
    schemasDir: options.schemasDir ?? fallback?.schemasDir,
    cacheDir,
    projectRoot: root,
    ...(options.testKitDirs?.length ? { testKitDirs: options.testKitDirs.map((d) => resolve(root, d)) } : {}),
    skipRateAbuse: options.signedRequests?.skipRateAbuse,
    requests: options.requests,
    seededState: options.seededState,
    runnerContracts: options.runnerContracts,
    webhookSignerJwks:
      options.webhooks?.signerJwks !== undefined ? absoluteJwksLocation(options.webhooks.signerJwks, root) : undefined,
    // Set by prepareAgentStart (run-agent.ts), which configureVitest calls before this.
    agentLog: options.agent?.start ? agentLogFile : undefined,
  };
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
