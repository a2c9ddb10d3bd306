import * as z from "zod";
import { loadAgents, type AgentDefinition } from "../extensions/agents.js";
import { countLines, defineTool, fail, strArg, toolInput } from "./define.js";
import type { Tool, ToolContext } from "./tool.js";

const NAME = "task";
/** Steps a child may take when the call names no limit, and the most it may ask for. */
export const DEFAULT_CHILD_STEPS = 25;
const MAX_CHILD_STEPS = 100;

const TaskInput = toolInput(NAME, () => z.object({
  description: z.string().trim().min(1).max(200).describe("A short title for the task (3-8 words), shown to the user"),
  prompt: z.string().trim().min(1).describe("The whole task for the subagent: it sees nothing of this conversation, so say everything it needs"),
  tools: z.array(z.string()).max(50).optional().describe("Tool names the subagent may use, from yours; default: the read-only ones"),
  agent: z.string().optional().describe("A custom agent to run (listed in this tool's description); default: a general subagent"),
  max_steps: z.number().int().min(1).max(MAX_CHILD_STEPS).optional().describe(`The subagent's step limit (default ${DEFAULT_CHILD_STEPS})`),
}));

const ROLE = [
  "You are a subagent of Keen, a coding agent working in the user's terminal. The main agent gave you one task;",
  "you see nothing of its conversation. Do the task with your tools, then answer with what the main agent needs:",
  "findings with file paths and line numbers, what you changed, what failed. Your final message is all it sees of your",
  "work, and nobody can answer questions, so never ask one: decide, and say what you assumed.",
].join(" ");

/**
 * The tools a child may use: those the call names (or the agent's, or else the parent's
 * read-only ones), never one the parent lacks and never `task` itself, so a child cannot
 * start children. An agent's `tools` narrows further; names it lists that the parent lacks
 * (written for another tool set) are dropped. Returns an error message for a named tool
 * the parent does not have.
 */
export function childTools(parent: Tool[], named: string[] | undefined, agentTools?: string[]): Tool[] | string {
  const offered = parent.filter((t) => t.definition.name !== NAME);
  if (named) {
    const unknown = named.filter((n) => !offered.some((t) => t.definition.name === n));
    if (unknown.length) {
      const names = offered.map((t) => t.definition.name).join(", ");
      return `Unknown tool${unknown.length > 1 ? "s" : ""} for the subagent: ${unknown.join(", ")}. It may use these of yours: ${names || "none"}.`;
    }
  }
  const wanted = named ?? agentTools;
  let tools = wanted ? offered.filter((t) => wanted.includes(t.definition.name)) : offered.filter((t) => t.kind === "read" || t.kind === "search");
  if (named && agentTools) tools = tools.filter((t) => agentTools.includes(t.definition.name));
  // Job control (job_output, job_kill) goes with the shell tool, as in the session: a child without it has no jobs of its own.
  if (!tools.some((t) => t.shell)) tools = tools.filter((t) => !t.jobControl);
  return tools;
}

/** The child's system prompt: the subagent's role, where it works, its tools, and a custom agent's own instructions. */
export function childSystem(ctx: Pick<ToolContext, "cwd" | "workspace">, tools: Tool[], agent?: AgentDefinition, date = new Date()): string {
  return [
    ROLE,
    `Working directory: ${ctx.cwd}\nWorkspace root: ${ctx.workspace}\nToday's date: ${date.toISOString().slice(0, 10)}`,
    tools.length ? `Tools: ${tools.map((t) => t.definition.name).join(", ")}.` : "You have no tools: answer from the task alone.",
    ...(agent ? [`You are the "${agent.name}" agent. Its instructions:\n\n${agent.prompt}`] : []),
  ].join("\n\n");
}

function description(agents: AgentDefinition[]): string {
  const lines = [
    "Delegate a self-contained task to a subagent with a fresh context: it works with its own tools and step limit and returns only its final answer.",
    "Use it for broad searches and investigations whose intermediate output you do not need, or for independent tasks; several task calls in one response run at the same time.",
    "The prompt must say everything: the subagent sees nothing of this conversation. By default it gets your read-only tools; name more in `tools` if it must change things.",
  ];
  if (agents.length) {
    lines.push("Custom agents (pass the name as `agent`):", ...agents.map((a) => `- ${a.name}: ${a.description}`));
  }
  return lines.join("\n");
}

/**
 * `task`: runs a subagent, the turn loop again with a fresh context (app/agent/subagent.ts),
 * and returns its final answer. It changes nothing itself: what its child does goes through
 * the permission gate call by call, so it declares `mutates: false` and no mode asks about
 * it; its kind is `other`. It is `concurrent`: several calls in one step run at once.
 * Agent definitions are read when the session's tools are built (their names and
 * descriptions are in the description the model sees) and again at each call.
 * A definition's `model` is honoured: the child runs on that model (resolved by the session's setup,
 * app/cli/agent-models.ts: Claude Code's `sonnet`/`opus`/`haiku`, a model id a configured provider
 * lists, or `<provider>/<model>`), priced at its own price in the turn's cost; without one (or with
 * `inherit`) on the turn's. A model that cannot be used fails the call, naming the model and the
 * agent's file: never a silent fallback to another model. The call's title names that model while it runs
 * (`Task (explorer · anthropic/claude-haiku-4-5): Find callers`); the result's `details.model` says which ran.
 */
export function createTaskTool(ctx: ToolContext): Tool {
  const agents = () => loadAgents(ctx.configDir, ctx.workspace);
  return defineTool("task", description(agents()), TaskInput, async (input, call) => {
    if (!call.subagent) return fail("Subagents are not available in this session.");
    let agent: AgentDefinition | undefined;
    if (input.agent) {
      const all = agents();
      agent = all.find((a) => a.name === input.agent!.toLowerCase());
      if (!agent) return fail(`No agent named "${input.agent}". Agents: ${all.map((a) => a.name).join(", ") || "none"}.`);
    }
    const tools = childTools(call.subagent.tools, input.tools, agent?.tools);
    if (typeof tools === "string") return fail(tools);
    const maxSteps = input.max_steps ?? DEFAULT_CHILD_STEPS;
    const outcome = await call.subagent.run({
      system: childSystem(ctx, tools, agent), prompt: input.prompt, tools, maxSteps, ...(agent?.model ? { model: agent.model } : {}),
    });
    if (outcome.refused) {
      return fail(`The agent "${agent!.name}" (${agent!.file}) names the model "${agent!.model}", which cannot be used: ${outcome.refused}`);
    }
    const details = {
      ...(agent ? { agent: agent.name } : {}), ...(outcome.model ? { model: outcome.model } : {}),
      tools: tools.map((t) => t.definition.name), steps: outcome.steps, status: outcome.status,
    };
    if (outcome.status === "interrupted") return fail("The subagent was interrupted.", details);
    if (outcome.status === "error") return fail(`The subagent failed: ${outcome.errors.join("; ") || "unknown error"}`, details);
    if (!outcome.text.trim()) return fail("The subagent ended without an answer.", details);
    const limit = outcome.status === "max_turns" ? `\n\n(The subagent reached its limit of ${maxSteps} steps.)` : "";
    // For UIs: the answer's own lines, and Keen's word on how the subagent ended, apart from each other.
    const told = { ...details, output_lines: countLines(outcome.text), ...(limit ? { note: `used all ${maxSteps} steps` } : {}) };
    return { content: `${outcome.text}${limit}`, is_error: false, details: told };
  }, {
    kind: "other",
    mutates: false,
    concurrent: true,
    describe: (args) => {
      // An agent that names its own model shows it from the start (the status bar shows the one every other task runs on),
      // before the description: a narrow line cuts the end of a title.
      const name = strArg(args, "agent");
      const model = name ? agents().find((a) => a.name === name.toLowerCase())?.model : undefined;
      const label = [name, model && (ctx.agentModel?.(model) ?? model)].filter(Boolean).join(" · ");
      return { title: `Task${label ? ` (${label})` : ""}: ${strArg(args, "description") ?? "subagent"}`, locations: [] };
    },
  });
}
