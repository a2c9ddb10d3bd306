import * as z from "zod";
import type { PlanEntry } from "../../protocol/events.js";
import { defineTool, toolInput } from "./define.js";
import type { Tool } from "./tool.js";

const TodoInput = toolInput("todo_write", () => z.object({
  todos: z.array(z.object({
    content: z.string().trim().min(1).describe("What to do, in a few words"),
    status: z.enum(["pending", "in_progress", "completed"]),
    priority: z.enum(["high", "medium", "low"]).optional(),
  })).max(100).describe("The whole plan, in order; it replaces the previous one"),
}));

/**
 * `todo_write`: the model's plan for the task, a list replaced whole on each call (no
 * merging, so a call always says the entire plan). It touches nothing outside the session,
 * so it declares `mutates: false` and no permission mode asks about it or refuses it; its
 * kind is `other` since it neither reads, edits, runs nor fetches. Its result carries the
 * list as `plan`, which the tool runner emits as a `plan-update` event: the event, not the
 * tool's name, is what the TUI, ACP and a resumed session go by. Statuses are
 * pending / in_progress / completed, the words ACP's plan entries and models already use.
 */
export function createTodoWriteTool(): Tool {
  return defineTool(
    "todo_write",
    "Write your plan for a multi-step task as a checklist the user sees. Each call replaces the whole list: send every item, " +
      "each pending, in_progress or completed. Keep one item in_progress at a time and mark items completed as soon as they are done. " +
      "Skip it for simple one-step requests.",
    TodoInput,
    async ({ todos }) => {
      const plan: PlanEntry[] = todos.map((t) => ({ content: t.content, status: t.status, ...(t.priority ? { priority: t.priority } : {}) }));
      const done = plan.filter((e) => e.status === "completed").length;
      const content = plan.length === 0 ? "Plan cleared." : `Plan updated: ${done} of ${plan.length} done.`;
      return { content, is_error: false, plan };
    },
    {
      kind: "other",
      mutates: false,
      describe: (args) => {
        const n = Array.isArray(args.todos) ? args.todos.length : 0;
        return { title: n === 1 ? "Plan (1 item)" : `Plan (${n} items)`, locations: [] };
      },
    },
  );
}
