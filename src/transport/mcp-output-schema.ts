/**
 * A tool's `outputSchema`, as MCP clients enforce it. MCP: a tool that declares one in `tools/list` returns
 * structuredContent that conforms to it. The SDK's `Client.callTool` refuses a result that does not by throwing a
 * JSON-RPC error of its own (-32602), which a runner then records as the agent's error answer, though the agent sent a
 * result: the record would show an answer nobody sent, and a step expecting an error would pass on it. So the transport
 * (mcp.ts) sends `tools/call` itself and asks this module, which checks the result with the SDK's own validator (Ajv):
 * the agent's result is recorded as it came, and the refusal is the step's transport-level error.
 *
 * The validator is made on first use (the SDK makes an Ajv per client otherwise, for agents whose tools mostly declare
 * no schema), and a schema is compiled the first time its tool's result is checked, not when it is listed — once for
 * every session of the process (SchemaChecks). The agent sets the schema, so its cost is bounded: in size
 * (MAX_CHECKED_SCHEMA_BYTES) and, for the regular expressions it writes, in time (MAX_CHECK_MS).
 */
import { type Context, createContext, Script } from 'node:vm';
import type { JsonSchemaType, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';

type Check = (input: unknown) => { valid: boolean; errorMessage?: string };
/**
 * A result's check: its verdict; or why the check failed on this result (`failed`: it threw, e.g. a recursive schema
 * on data nested past the stack); or why the schema cannot check results (`why`: it does not compile, or a check of
 * it ran past MAX_CHECK_MS; the same for every result from then on).
 */
type BoundedCheck = (input: unknown) => ReturnType<Check> | { failed: string } | Unusable;

/**
 * The largest declared schema checked (its JSON). Ajv compiles 4–5 ms per KiB of a plain object schema on this
 * project's 2-core machine (3.3 MiB: 17 s) on the run's one thread, and the agent sets the size: a larger one would
 * stall every storyboard in flight. Real output schemas are tens of KiB. One over the bound is not checked: the check is
 * MCP's, not AdCP's, and the AdCP response schemas still grade the result.
 */
export const MAX_CHECKED_SCHEMA_BYTES = 256 * 1024;

/** How many compiled checks SchemaChecks keeps: the agent sets how many distinct schemas it lists. */
export const MAX_KEPT_CHECKS = 64;

/**
 * The longest one check of a result may take, in ms, when its schema has a `pattern` (or `patternProperties`). The
 * agent writes those regular expressions and JavaScript's run them by backtracking: `^(a|a)*$` on forty characters
 * would hold the run's one thread for longer than any step timeout can end it (the timers never get to run). A real
 * result checks in milliseconds; past this, the schema is taken as one no client can check, like one that does not
 * compile.
 */
export const MAX_CHECK_MS = 2_000;

/** Why a schema cannot be used, in the words of the refusal: `<tool>'s outputSchema in tools/list <why>`. */
interface Unusable {
  why: string;
}

const timedOut = (ms: number): Unusable => ({
  why: `cannot be checked in bounded time (a result took over ${ms / 1000} s: a \`pattern\` there backtracks without bound)`,
});

/** The check of a schema that cannot check results: `why`, whatever the result. */
const refusing =
  (unusable: Unusable): BoundedCheck =>
  () =>
    unusable;

/**
 * Runs `check(input)` for at most `ms`: inside a vm context with a timeout, whose watchdog interrupts the thread even
 * inside a regular expression's backtracking (Node's `timeout` option of `runInContext`). One context for the process;
 * ~0.1 ms a call, so only checks whose schema holds an agent's pattern go through it.
 */
let sandbox: { context: Context; script: Script } | undefined;
function checkWithin(check: Check, input: unknown, ms: number): ReturnType<Check> | undefined {
  sandbox ??= { context: createContext(), script: new Script('check(input)') };
  const { context, script } = sandbox;
  context.check = check;
  context.input = input;
  try {
    return script.runInContext(context, { timeout: ms }) as ReturnType<Check>;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') return undefined;
    throw error;
  } finally {
    context.check = context.input = undefined;
  }
}

/**
 * Declared output schemas compiled, by their JSON text, for every MCP session of the process. An agent lists the same
 * tools to each session (a run opens one per storyboard), each listing a new object, and Ajv knows a schema it compiled
 * only by the object: compiled per session, a 200 KiB schema cost each of a run's sessions about a second. Past
 * MAX_KEPT_CHECKS distinct schemas, it starts over.
 */
export class SchemaChecks {
  private readonly checks = new Map<string, BoundedCheck>();
  private validator: jsonSchemaValidator | undefined;

  constructor(
    private readonly makeValidator: () => jsonSchemaValidator,
    /** MAX_CHECK_MS; shorter in tests. */
    private readonly maxCheckMs = MAX_CHECK_MS,
  ) {}

  /** The check of `schema` (`text`: its JSON). */
  of(schema: JsonSchemaType, text: string): BoundedCheck {
    let check = this.checks.get(text);
    if (check === undefined) {
      if (this.checks.size >= MAX_KEPT_CHECKS) {
        // Start over with a new validator: Ajv keeps every schema it compiled for as long as it lives.
        this.checks.clear();
        this.validator = undefined;
      }
      check = this.compile(schema, text);
      this.checks.set(text, check);
    }
    return check;
  }

  /** The schema's check; one that refuses every result when Ajv cannot compile it. */
  private compile(schema: JsonSchemaType, text: string): BoundedCheck {
    let check: Check;
    try {
      check = (this.validator ??= this.makeValidator()).getValidator(schema);
    } catch (error) {
      return refusing({ why: `does not compile (${error instanceof Error ? error.message : String(error)})` });
    }
    // `"pattern` also finds `"patternProperties"`, and a property named so (checked bounded for nothing worse).
    const agentPatterns = text.includes('"pattern');
    const ms = this.maxCheckMs;
    return (input) => {
      let outcome: ReturnType<Check> | undefined;
      try {
        outcome = agentPatterns ? checkWithin(check, input, ms) : check(input);
      } catch (error) {
        return { failed: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
      }
      if (outcome !== undefined) return outcome;
      // A later result could take as long again: the schema is unusable from now on, and not run again.
      const unusable = timedOut(ms);
      this.checks.set(text, refusing(unusable));
      return unusable;
    };
  }
}

/** One MCP session's declared output schemas, by tool, checked through the process's SchemaChecks. */
export class OutputSchemas {
  private readonly declared = new Map<string, { schema: JsonSchemaType; text: string } | undefined>();

  constructor(private readonly checks: SchemaChecks) {}

  /**
   * For the SDK's Client, which compiles each listed tool's schema for its `callTool` (an Ajv per client besides): the
   * transport never calls that, so it gets checks that compile nothing and say so if ever run.
   */
  static forClient(): jsonSchemaValidator {
    return {
      getValidator: () => () => {
        throw new Error(
          'vitest-adcp: tool results are checked by the transport (mcp-output-schema.ts), not by callTool',
        );
      },
    };
  }

  /**
   * A `tools/list` page's tools. Every page counts (the SDK's own cache keeps only the last page's). A schema over
   * MAX_CHECKED_SCHEMA_BYTES is left unchecked.
   */
  listed(tools: readonly { name: string; outputSchema?: JsonSchemaType }[]): void {
    for (const { name, outputSchema } of tools) {
      const text = outputSchema ? JSON.stringify(outputSchema) : undefined;
      const checked = text !== undefined && text.length <= MAX_CHECKED_SCHEMA_BYTES;
      this.declared.set(name, checked ? { schema: outputSchema!, text } : undefined);
    }
  }

  /** Why an MCP client refuses this result of `tool` (one line), or undefined when it takes it. */
  refusal(tool: string, result: { structuredContent?: unknown; isError?: boolean }): string | undefined {
    const declared = this.declared.get(tool);
    // An error result (isError) is held to nothing: it carries the error, not the declared output. The SDK's server
    // exempts it so, and its client means to (its comment says so; 1.32 checks its structuredContent anyway:
    // modelcontextprotocol/typescript-sdk#1943).
    if (!declared || result.isError === true) return undefined;
    if (result.structuredContent === undefined) {
      return `${tool} declares an outputSchema in tools/list but its result has no structuredContent: an MCP client refuses it (MCP: a tool with an outputSchema returns structured results that conform to it)`;
    }
    const outcome = this.checks.of(declared.schema, declared.text)(result.structuredContent);
    if ('why' in outcome) {
      return `${tool}'s outputSchema in tools/list ${outcome.why}: an MCP client cannot take its results`;
    }
    if ('failed' in outcome) {
      return `${tool}'s structuredContent could not be checked against the outputSchema it declares in tools/list (${outcome.failed}): an MCP client cannot take the result`;
    }
    const { valid, errorMessage } = outcome;
    return valid
      ? undefined
      : `${tool}'s structuredContent does not match the outputSchema it declares in tools/list (${String(errorMessage)}): an MCP client refuses the result`;
  }
}
