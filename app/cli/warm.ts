import { warmToolSchemas } from "../tools/define.js";
import { warmConfigSchemas } from "./config.js";

/**
 * What the start-up snapshot holds (see app/cli/entry.ts): the modules a
 * command loads lazily, evaluated, plus work that depends on nothing but the
 * code (tool JSON Schemas, zod's compiled parsers). Never reads the
 * environment, files or stdio: it runs once, on the build machine. A module
 * that touches the terminal or the environment when imported (blessed) must
 * not be imported from here.
 */
export async function warmUp(): Promise<void> {
  await Promise.all([
    import("./run.js"),
    import("./sessions.js"),
    import("../providers/anthropic.js"),
    import("../providers/anthropic-client.js"),
    import("../providers/openai.js"),
    import("openai"),
  ]);
  // Both are declared by modules run.js loads: import them first.
  warmToolSchemas();
  warmConfigSchemas();
}
