import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ChangePreview, PermissionRequester } from "../permissions/requester.js";
import { cliCallView } from "./cli-tools.js";
import { RELAY_SERVER, RELAY_TOOL, type RelayAnswer, type RelayAsk } from "./permission-relay-wire.js";

/** A running relay: the CLI arguments that make claude ask Keen, and how to stop it. */
export interface PermissionRelay {
  args: string[];
  close(): Promise<void>;
}

/** What a relay answers with, and the hooks that keep the events in order around an ask. */
export interface RelayOptions {
  requester: PermissionRequester;
  signal: AbortSignal;
  /** dist/permission-relay.cjs (relayServerPath). */
  serverPath: string;
  /** Before asking: waits for the call's tool-use event. */
  before?(ask: RelayAsk): Promise<void>;
  /** After the answer, before the CLI hears it. */
  after?(ask: RelayAsk, allow: boolean): Promise<void>;
  /** The change a Write or Edit ask would make, for the person deciding (nothing when it cannot be shown). */
  preview?(tool: string, input: Record<string, unknown>): Promise<ChangePreview | undefined>;
}

/** The relay's MCP server bundle (dist/permission-relay.cjs): beside the running bundle, else the repo's dist/ (tests run from source). */
export function relayServerPath(): string | undefined {
  const candidates = [new URL("./permission-relay.cjs", import.meta.url), new URL("../../dist/permission-relay.cjs", import.meta.url)];
  return candidates.map((url) => fileURLToPath(url)).find((path) => existsSync(path));
}

/**
 * Listens on a private unix socket (a fresh 0700 directory, the socket 0600)
 * for the asks of the MCP server claude spawns from `--mcp-config`, and
 * answers each through `requester` — the engine's permission gate, so an ask
 * becomes a `permission-request` event and the front end's reply decides,
 * with the mode and the standing rules applied as for Keen's own tools.
 * Contract: throws only while starting (nothing is left behind then); an
 * ask that fails is a denial; `close` removes the directory.
 */
export async function startPermissionRelay(options: RelayOptions): Promise<PermissionRelay> {
  // A unix socket path must stay under ~107 bytes: a long TMPDIR falls back to /tmp.
  const base = join(tmpdir(), "keen-relay-XXXXXX/relay.sock").length < 100 ? tmpdir() : "/tmp";
  const dir = mkdtempSync(join(base, "keen-relay-"));
  const socket = join(dir, "relay.sock");
  const open = new Set<Socket>();
  const server: Server = createServer((connection) => {
    open.add(connection);
    connection.on("close", () => open.delete(connection));
    connection.on("error", () => {});
    let buffered = "";
    connection.setEncoding("utf8");
    connection.on("data", (chunk: string) => {
      buffered += chunk;
      const at = buffered.indexOf("\n");
      if (at < 0) return;
      const line = buffered.slice(0, at);
      buffered = "";
      void answer(line, options)
        .catch((): RelayAnswer => ({ behavior: "deny", message: "Keen failed while asking; not executed." }))
        .then((reply) => connection.end(JSON.stringify(reply) + "\n"));
    });
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socket, () => resolve());
    });
    chmodSync(socket, 0o600);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const config = { mcpServers: { [RELAY_SERVER]: { type: "stdio", command: process.execPath, args: [options.serverPath], env: { KEEN_RELAY_SOCKET: socket } } } };
  return {
    args: ["--mcp-config", JSON.stringify(config), "--permission-prompt-tool", `mcp__${RELAY_SERVER}__${RELAY_TOOL}`],
    async close() {
      for (const connection of open) connection.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function answer(line: string, options: RelayOptions): Promise<RelayAnswer> {
  let ask: RelayAsk;
  try {
    ask = JSON.parse(line) as RelayAsk;
    if (typeof ask.tool_name !== "string") throw new Error("no tool_name");
  } catch {
    return { behavior: "deny", message: "Keen could not read this permission request." };
  }
  const input = ask.input && typeof ask.input === "object" ? ask.input : {};
  await options.before?.(ask);
  const preview = options.preview && options.requester.wantsPreview?.({ tool: ask.tool_name }) ? await options.preview(ask.tool_name, input) : undefined;
  // The CLI's own tool names, as its tool-use events show them; the gate treats them as it treats any unknown tool.
  const decision = await options.requester.request(
    {
      // `view` labels the prompt; no `kind`: the CLI asks only where its own rules want a person, so Keen asks too.
      tool: ask.tool_name, input, summary: `${ask.tool_name} ${JSON.stringify(input)}`, view: cliCallView(ask.tool_name, input),
      ...(ask.tool_use_id ? { callId: ask.tool_use_id } : {}), ...(preview ? { preview } : {}),
      describe: async (next: unknown) => {
        const rewritten = (next && typeof next === "object" ? next : {}) as Record<string, unknown>;
        const shown = options.preview ? await options.preview(ask.tool_name, rewritten) : undefined;
        return { view: cliCallView(ask.tool_name, rewritten), summary: `${ask.tool_name} ${JSON.stringify(rewritten)}`, ...(shown ? { preview: shown } : {}) };
      },
    },
    options.signal,
  );
  await options.after?.(ask, decision.allow);
  // A PreToolUse hook's rewrite reaches the CLI as its `updatedInput`.
  const updated = decision.allow && decision.input && typeof decision.input === "object" ? (decision.input as Record<string, unknown>) : input;
  return decision.allow ? { behavior: "allow", updatedInput: updated } : { behavior: "deny", message: decision.reason };
}
