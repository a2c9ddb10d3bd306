// The JSON Schema of every built-in tool's input, converted by zod from the source at build time, for
// app/tools/define.ts (`__KEEN_TOOL_SCHEMAS__`): a run then sends the model its tool list without
// converting a schema (~10 ms of a start's CPU). The source runs through tsx (a dev dependency, as
// esbuild is): the same zod and the same schema objects the bundle holds, so the same JSON.
import { tsImport } from "tsx/esm/api";

export async function toolSchemas() {
  const { builtToolSchemas } = await tsImport("./tool-schemas-source.ts", import.meta.url);
  return builtToolSchemas();
}
