import { Command, CommanderError, Option } from "commander";
import { PERMISSION_MODES } from "../../protocol/modes.js";
import { terminalText } from "../headless/terminal-text.js";
import { ExitError, UsageError } from "./errors.js";
import { version } from "./version.js";

/**
 * The composition root's entry: parse flags, load the command's module lazily
 * (start-up pays only for what runs), turn fatal errors into exit codes.
 */
export async function main(argv: string[]): Promise<number> {
  const program = new Command("keen").version(version).description("Keen, a terminal coding agent").exitOverride();
  // A usage error is one line on stderr, like every other failure before the run starts.
  program.configureOutput({
    outputError: (str, write) => write(`keen: ${terminalText(str.trim().replace(/^error: /, ""))} (see --help)\n`),
  });
  let pending: (() => Promise<number>) | undefined;
  const want = commandsFor(argv);

  // `keen` alone opens the TUI; its options come before any command (run has its own --model).
  program.enablePositionalOptions();
  if (want("")) {
    program
      .option("-r, --resume <id>", "open the TUI on a stored session (id or unique prefix)")
      .option("-c, --continue", "open the TUI on the latest session of this directory")
      .option("--theme <theme>", "dark (default), light, high-contrast, or a theme file")
      .option("--cwd <dir>", "working directory of new sessions");
    sessionOptions(program, { permissionMode: "default ask", maxTurns: "limit the model requests of each turn", replayMode: "ask" })
      .action((flags) => {
        pending = async () => (await import("./tui.js")).tuiCommand(flags);
      });
  }

  if (want("run")) {
    const run = program
      .command("run")
      .description("run one turn non-interactively and print the answer")
      .argument("[message...]", "the prompt (joined by spaces); piped stdin is appended")
      .option("-s, --session <id>", "resume a session by id or unique prefix (see keen sessions list)")
      .option("-c, --continue", "continue the most recent session of this working directory (or --cwd)")
      .addOption(new Option("-f, --format <format>", "output: text or json").choices(["text", "json"]))
      .option("--headless", "write JSON lines (see docs/PROTOCOL.md)")
      .option("--stream-deltas", "with --headless: also stream text and thinking deltas")
      .option("--cwd <dir>", "working directory for tools (default: the session's, else the current one)")
      .option("--timeout <seconds>", "bound the whole run")
      .option("--no-stdin", "never read stdin")
      .option("--binary-stdin", "send stdin even when it is not text (NUL bytes, invalid UTF-8)")
      .option("--output-schema <file>", "JSON Schema the answer must satisfy")
      .addOption(new Option("--input-format <format>", "with --headless: jsonl reads commands from stdin (= keen stdio)").choices(["text", "jsonl"]));
    sessionOptions(run, {
      permissionMode: "default auto; ask needs keen stdio or the TUI", maxTurns: "limit the model requests of this run", replayMode: "read-only",
    }).action((message: string[], flags) => {
      const formatGiven = run.getOptionValueSource("format") === "cli";
      if (flags.inputFormat === "jsonl") {
        pending = async () => (await import("./stdio.js")).stdioFromRun(message, flags, formatGiven);
        return;
      }
      pending = async () => (await import("./run.js")).runCommand(message, flags, formatGiven);
    });
  }

  if (want("stdio")) {
    const stdio = program
      .command("stdio")
      .description("two-way JSON lines: commands on stdin, events on stdout (see docs/PROTOCOL.md)")
      .option("-s, --session <id>", "start in a stored session (id or unique prefix)")
      .option("--cwd <dir>", "working directory of new sessions")
      .option("--timeout <seconds>", "bound each turn")
      .option("--output-schema <file>", "JSON Schema every answer must satisfy");
    sessionOptions(stdio, {
      permissionMode: "default ask; also the widest mode a set-permission-mode command may choose",
      maxTurns: "limit the model requests of each turn", replayMode: "ask",
    }).action((flags) => {
      pending = async () => (await import("./stdio.js")).stdioFromFlags(flags);
    });
  }

  if (want("acp")) {
    const acp = program
      .command("acp")
      .description("speak the Agent Client Protocol on stdio, for editors such as Zed (see README)");
    sessionOptions(acp, {
      model: "model of new sessions, e.g. anthropic/claude-sonnet-5-5", permissionMode: "default ask",
      maxTurns: "limit the model requests of each turn",
    }).action((flags) => {
      pending = async () => (await import("./acp.js")).acpCommand(flags);
    });
  }

  if (want("sessions")) {
    const sessions = listByDefault(program.command("sessions").description("list, show, fork, compact, export, remove and prune stored sessions (default: list)"));
    sessions.command("list", { isDefault: true }).description("sessions of this directory, newest first: short id, updated, status, model, cwd, title")
      .option("--cwd <dir>", "sessions of this directory instead of the current one")
      .option("--all", "sessions of every directory")
      .option("--limit <n>", "at most n sessions")
      .option("--json", "print JSON (each session with its short_id)")
      .action((flags) => {
        pending = async () => (await import("./sessions.js")).listSessions(flags);
      });
    sessions.command("show").description("a session's transcript (thinking faint, cut-off text marked [partial])")
      .argument("<id>", "session id or unique prefix").option("--json", "print JSON: the session and its stored events")
      .option("--jsonl", "replay as JSON lines (the --headless schema)")
      .action((id: string, flags) => {
        pending = async () => (await import("./sessions.js")).showSession(id, flags);
      });
    sessions.command("compact").description("summarise a session's older messages now, while no turn runs (its model writes the summary)")
      .argument("<id>", "session id or unique prefix")
      .option("--instructions <text>", "what the summary should focus on")
      .action((id: string, flags: { instructions?: string }) => {
        pending = async () => (await import("./sessions-compact.js")).compactSession(id, flags);
      });
    sessions.command("fork").description("start a new session with a session's history before a prompt (default: all of it); prints its id")
      .argument("<id>", "session id or unique prefix")
      .option("--at <n>", "the prompt to fork before (1-based, as the TUI's /rewind numbers them)")
      .action((id: string, flags: { at?: string }) => {
        pending = async () => (await import("./sessions-fork.js")).forkStoredSession(id, flags);
      });
    sessions.command("export").description("write the cassette of a session recorded with --record").argument("<id>", "session id or unique prefix")
      .requiredOption("--cassette <file>", "write the session's cassette (recorded with --record or KEEN_RECORD) to <file>, - for stdout")
      .action((id: string, flags: { cassette: string }) => {
        pending = async () => (await import("./sessions.js")).exportSession(id, flags);
      });
    sessions.command("rm").description("remove sessions (a running one is refused)").argument("<id...>", "session ids or unique prefixes")
      .action((ids: string[]) => {
        pending = async () => (await import("./sessions.js")).removeSessions(ids);
      });
    sessions.command("prune").description("remove sessions not updated for a while (never a running one)")
      .requiredOption("--older-than <duration>", "e.g. 30d, 12h, 90m, 2w")
      .option("--status <list>", "only these end states: success, error, interrupted, max_turns (comma-separated)")
      .option("--cwd <dir>", "only sessions of this directory")
      .option("--dry-run", "list what would be removed, remove nothing")
      .action((flags) => {
        pending = async () => (await import("./sessions.js")).pruneSessions(flags);
      });
  }
  if (want("mcp")) {
    const mcp = listByDefault(program.command("mcp").description("MCP servers: list, inspect, add, remove, trust a project's .mcp.json (see README)"));
    mcp.command("list", { isDefault: true }).description("each server: source, trust, status, tool count (connects to each one)")
      .option("--json", "print JSON").option("--cwd <dir>", "the workspace of this directory instead of the current one");
    mcpOption(mcp.commands.at(-1)!).action((flags) => {
      pending = async () => (await import("./mcp-command.js")).mcpList(flags);
    });
    mcp.command("get").description("one server's status and tools").argument("<name>", "server name")
      .option("--json", "print JSON").option("--cwd <dir>", "the workspace of this directory instead of the current one");
    mcpOption(mcp.commands.at(-1)!).action((name: string, flags) => {
      pending = async () => (await import("./mcp-command.js")).mcpGet(name, flags);
    });
    mcp.command("add").description("add a server: keen mcp add <name> [-e KEY=VALUE…] -- <command> [args…], or --transport http|sse <name> <url>")
      .argument("[name]", "server name").argument("[commandOrUrl]", "the command (after --), or the URL with --transport http|sse").argument("[args...]", "the command's arguments")
      .option("-s, --scope <scope>", "user (your config, the default) or project (the workspace's .mcp.json); Claude Code's local is refused")
      .option("-t, --transport <transport>", "stdio (default), http or sse")
      .option("-e, --env <KEY=VALUE...>", "a stdio server's environment")
      .option("-H, --header <header...>", "an http or sse server's header, \"Name: value\"")
      .option("--cwd <dir>", "the workspace of this directory instead of the current one")
      .action((name: string | undefined, target: string | undefined, args: string[], flags) => {
        pending = async () => (await import("./mcp-edit.js")).mcpAdd(name, target, args, flags);
      });
    mcp.command("remove").description("remove a server from your config or the workspace's .mcp.json").argument("<name>", "server name")
      .option("-s, --scope <scope>", "user or project (default: whichever has it)")
      .option("--cwd <dir>", "the workspace of this directory instead of the current one")
      .action((name: string, flags) => {
        pending = async () => (await import("./mcp-edit.js")).mcpRemove(name, flags);
      });
    mcp.command("trust").description("use this workspace's .mcp.json (its servers run commands of the repository's choosing)")
      .option("--allow-env <names>", "comma-separated secret-looking variables the file may read with ${VAR}")
      .option("--cwd <dir>", "the workspace of this directory instead of the current one")
      .action((flags) => {
        pending = async () => (await import("./mcp-command.js")).mcpTrust(flags);
      });
    mcp.command("untrust").description("stop using this workspace's .mcp.json")
      .option("--cwd <dir>", "the workspace of this directory instead of the current one")
      .action((flags) => {
        pending = async () => (await import("./mcp-command.js")).mcpUntrust(flags);
      });
  }
  if (want("trust")) {
    program.command("trust").description("run this workspace's .mcp.json servers and project hooks (commands of the repository's choosing)")
      .option("--allow-env <names>", "comma-separated secret-looking variables .mcp.json may read with ${VAR}")
      .option("--cwd <dir>", "the workspace of this directory instead of the current one")
      .action((flags) => {
        pending = async () => (await import("./trust-command.js")).trustCommand(flags);
      });
  }
  if (want("untrust")) {
    program.command("untrust").description("stop running this workspace's .mcp.json servers and project hooks")
      .option("--cwd <dir>", "the workspace of this directory instead of the current one")
      .action((flags) => {
        pending = async () => (await import("./trust-command.js")).untrustCommand(flags);
      });
  }
  if (want("protocol")) {
    program.command("protocol").description("the --headless JSON-lines protocol").command("schema")
      .description("print the JSON Schema of a --headless line (or, with --commands, of a keen stdio command)")
      .option("--commands", "the schema of the commands keen stdio reads")
      .action((flags: { commands?: boolean }) => {
        pending = async () => (await import("./sessions.js")).printSchema(flags);
      });
  }

  try {
    await program.parseAsync(argv, { from: "user" });
    if (!pending) {
      program.outputHelp();
      return 0;
    }
    return await pending();
  } catch (error) {
    return await fail(error);
  }
}

const COMMANDS = new Set(["run", "stdio", "acp", "sessions", "mcp", "trust", "untrust", "protocol"]);

/**
 * Which commands to declare for `argv` ("" is the TUI's own options): building commander's whole
 * tree costs a few ms of CPU at every start, and every spawn pays it. A command named first parses
 * with its own declaration alone (nothing can precede it), `--version` alone with none; anything
 * else (help, the TUI's options, an unknown word, which lists the commands) gets them all.
 */
export function commandsFor(argv: string[]): (name: string) => boolean {
  const first = argv[0];
  if (argv.length === 1 && (first === "--version" || first === "-V")) return () => false;
  if (first !== undefined && COMMANDS.has(first)) return (name) => name === first;
  return () => true;
}

/** The help lines that say a front end's own defaults. */
interface SessionHelp {
  model?: string;
  permissionMode: string;
  maxTurns: string;
  /** The permission mode a replay runs in unless set; absent: the front end takes no cassette flags. */
  replayMode?: string;
}

/** Adds the shared session flags (validated once, by session-flags.ts) to a front end's command. */
function sessionOptions(command: Command, help: SessionHelp): Command {
  command
    .option("-m, --model <provider/model>", help.model ?? "model to use, e.g. anthropic/claude-sonnet-5-5")
    .addOption(new Option("--permission-mode <mode>", help.permissionMode).choices(PERMISSION_MODES))
    .option("--allowed-tools <list>", "comma-separated tools the model may call")
    .option("--disallowed-tools <list>", "comma-separated tools the model may not call")
    .option("--max-turns <n>", help.maxTurns)
    .option("--sandbox <mode>", "confine bash: auto (default: when bwrap/socat/rg are present), on or off")
    .option("--runner <runner>", "embedded (Keen's own loop) or cli (the claude CLI; see README)");
  mcpOption(command);
  if (help.replayMode) cassetteOptions(command, help.replayMode);
  return command;
}

/** `--mcp-config <file or JSON>`, repeatable: MCP servers for this run only (README "MCP servers"). */
function mcpOption(command: Command): Command {
  return command.option("--mcp-config <file or JSON>", "MCP servers from a {\"mcpServers\": …} file or JSON string (repeatable)", (file: string, all: string[] = []) => [...all, file]);
}

/** `--record` / `--replay` and their companions (docs/CASSETTES.md). */
function cassetteOptions(command: Command, replayMode: string): Command {
  return command
    .option("--record <file>", "write the model requests and their streamed responses to a cassette (also KEEN_RECORD)")
    .option("--replay <file>", `serve every model request from a cassette instead of the network (no key needed; permission mode ${replayMode} unless set); "demo" replays the shipped demo in a temporary workspace`)
    .option("--replay-loose", "with --replay: serve the next recorded response even when the request differs")
    .option("--replay-speed <n>", "with --replay: 0 at once, 1 as recorded (default), N times faster");
}

/**
 * A command group whose bare form lists (`keen sessions`, `keen mcp`). Commander hands an
 * unknown word to the default subcommand ("too many arguments for 'list'"): it is an
 * unknown command instead, named with the group's commands.
 */
function listByDefault(group: Command): Command {
  return group.hook("preSubcommand", (command, sub) => {
    const word = command.args[0];
    if (sub.name() !== "list" || word === undefined || word === "list" || word.startsWith("-")) return;
    const names = command.commands.map((c) => c.name()).join(", ");
    command.error(`unknown command '${word}' for 'keen ${command.name()}' (commands: ${names})`, { code: "commander.unknownCommand", exitCode: 2 });
  });
}

async function fail(error: unknown): Promise<number> {
  if (error instanceof CommanderError) {
    if (error.code === "commander.helpDisplayed" || error.code === "commander.version" || error.code === "commander.help") return 0;
    return 2;
  }
  if (error instanceof UsageError || error instanceof ExitError) {
    await note(error.message);
    return error.exitCode;
  }
  if (error && typeof error === "object" && (error as { name?: string }).name === "StoreBusyError") {
    await note((error as Error).message);
    return 1;
  }
  // Errors that expect to be shown (the store's, a stdin timeout) carry their exit code: one line, no stack.
  if (error instanceof Error && typeof (error as { exitCode?: unknown }).exitCode === "number") {
    await note(error.message);
    return (error as Error & { exitCode: number }).exitCode;
  }
  await note(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  return 1;
}

/** One line for a person on stderr: known secrets redacted, control sequences made visible. */
async function note(message: string): Promise<void> {
  // Loaded only on failure: the secret-name rule lives beside the tools, which start-up should not pay for.
  const { secretsRedactor } = await import("./secrets.js");
  process.stderr.write(`keen: ${terminalText(secretsRedactor().redact(message))}\n`);
}
