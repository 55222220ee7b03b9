/**
 * `npx vitest-adcp --help`: the command's usage text. test/e2e/cli-flags.test.ts checks that it and the README's bin
 * section name the same flags.
 */
export const USAGE = `Usage: npx vitest-adcp <agent-url> [options] [-- <Vitest options>]
       npx vitest-adcp init [file.storyboard.yaml]
       npx vitest-adcp --version

Runs the AdCP compliance storyboards an agent must pass as Vitest tests. By
default the agent's get_adcp_capabilities chooses them, as
\`npx adcp storyboard run <agent-url>\` does: universal, a bundle per declared
protocol, each declared specialism, and the scenarios those require.

Options:
  --auth <token>             Bearer token for the agent (default: env ADCP_AUTH_TOKEN).
                             Visible to other local users in the process list
                             (ps) for the whole run: prefer --auth-file or the env
  --auth-file <path>         read the bearer token from this file, or from stdin
                             with \`--auth-file -\` (one line; neither it nor env
                             ADCP_AUTH_TOKEN shows in the process list)
  --protocol <mcp|a2a>       how to reach the agent (default: env ADCP_PROTOCOL, else mcp);
                             for a2a the URL is where its agent card is, e.g.
                             http://127.0.0.1:3000/a2a
  --storyboards <names>      run these instead of the capability-selected set:
                             storyboard ids, bundles (universal, media-buy,
                             sales-guaranteed, …) or *.yaml files, comma-separated.
                             A bundle's baseline id (media_buy_seller) runs with the
                             scenarios it requires; its bundle (media-buy) runs what
                             capability selection runs for that protocol
  --tracks <tracks>          run every storyboard of these tracks (comma-separated),
                             instead of the capability-selected set
  --sequential               one storyboard at a time, in the reference runner's
                             order (as the official grader runs them), for agents
                             that keep state per brand or account; with --list,
                             lists them in that order
  --concurrency <n>          storyboards in flight at once (default 32); 1 runs
                             one after another. A rate-limited answer (HTTP 429,
                             RATE_LIMITED) slows the whole run down on its own
  --report <file.json>       also write the runner output contract JSON there
  --report-html <file>       the same report as one HTML file (self-contained:
                             open it from a CI artifact)
  --report-markdown <file>   the markdown summary (appended to $GITHUB_STEP_SUMMARY
                             too, whenever that is set)
  --allow-http               local development: allow a plain http:// URL that is
                             not loopback, and agent-supplied URLs (OAuth issuer,
                             A2A endpoint) over http or on private addresses
  --compliance-version <v>   the AdCP compliance corpus: a version (3.1.19) or a
                             path to a compliance tree (default: env ADCP_COMPLIANCE,
                             else the version the installed @adcp/sdk pins). A
                             version the SDK lacks is fetched once from
                             $ADCP_BASE_URL/protocol/<v>.tgz (default
                             https://adcontextprotocol.org), checked against its
                             .sha256 (and cosign signature, when published and
                             cosign is installed; ADCP_REQUIRE_SIGNATURE=1 insists),
                             and cached per user
  --allow-unsupported-version
                             run the corpus even when the agent's
                             adcp.supported_versions leave its release out
                             (otherwise the run stops, exit 2; env
                             ADCP_ALLOW_UNSUPPORTED_VERSION=1)
  --list                     print the storyboards that would run, each with why
                             (capabilities, named, required scenario of …) and a
                             count, without running anything, and exit
  --skip-rate-abuse          signed_requests: do not send vector 020's 101 requests
                             (it grades unsatisfied_contract, rate_abuse_opt_out)
  --lenient-keys             load storyboards of a newer format version: unknown
                             keys and checks are warnings, not load errors (a
                             newer corpus, e.g. 3.2, loads so by itself)
  --seeded-state             declare the state of requires: [seeded_state]
                             storyboards provisioned out of band (env
                             ADCP_SEEDED_STATE=1); without it they are skipped
  --rate-limit-trip          host rate_limit_trip_runner: expect_rate_limit_not_replayed
                             sends up to 200 create_media_buy to trip the agent's
                             rate limiter (a sandbox only; env ADCP_RATE_LIMIT_TRIP=1);
                             without it that step is skipped not_applicable
  --requests-as-written      send each sample_request as written (after
                             substitution): no request enrichment, no warnings
                             about it (env ADCP_REQUESTS=as-written)
  --start <command>          start the agent with this shell command, wait until
                             it answers at <agent-url> (MCP initialize, or the
                             A2A agent card), run, then stop its process group.
                             An agent already answering there is used as it is,
                             unless env CI is set (then: exit 2)
  --start-timeout <ms>       how long the agent of --start has to answer
                             (default 60000); a command that exits first, or
                             does not answer in time, stops the run: exit 2
  --version                  print the versions of vitest-adcp, Vitest, @adcp/sdk
                             and its compliance corpus, and exit
  -h, --help                 this text

Webhooks (expect_webhook* steps, {{runner.webhook_url}}; without a receiver
they grade not_applicable):
  --webhook-receiver         host a receiver on 127.0.0.1 (an ephemeral port),
                             for an agent on this machine
  --webhook-base-url <url>   proxy mode: the public https URL that routes to the
                             receiver (default: env ADCP_RUNNER_WEBHOOK_BASE_URL)
  --webhook-port <n>         the port the receiver listens on (proxy mode needs
                             one; default: env ADCP_RUNNER_WEBHOOK_PORT)
  --webhook-allow-http       local development only: accept an http:// base URL
  --webhook-signer-jwks <url|file>
                             local development only: verify webhook signatures
                             against this JWKS instead of the spec's brand.json
                             discovery (each such verdict says so; default: env
                             ADCP_RUNNER_WEBHOOK_SIGNER_JWKS)

Vitest: everything after -- goes to Vitest, as to \`vitest run\`, e.g.
  -- -t '\\(get_capabilities\\)'      only the steps whose test name matches
  -- --bail 1                        stop after the first failed step
  -- --reporter=default --reporter=junit --outputFile junit.xml
                                     JUnit XML too (a --reporter replaces the
                                     default reporter: name it to keep it)
  -- media-buy                       only the storyboard files whose path has it
  --watch, --config, --root, --dir, --ui and --standalone do not apply: this
  command runs once, from here, without a config.

A storyboard of your own:
  init [file]                write a starter storyboard there (default
                             ./agent.storyboard.yaml; an existing file is never
                             overwritten), then run it with --storyboards <file>

Exit status: 0 passed, 1 a step failed, 2 usage or configuration error (the
agent unreachable or refusing the credentials included: nothing ran),
130/143 interrupted by SIGINT/SIGTERM: the run is cancelled (the call under way
is aborted, the rest are not run) and --report is still written; a second signal
exits at once.`;
