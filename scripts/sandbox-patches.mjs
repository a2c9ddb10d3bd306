// Changes to @anthropic-ai/sandbox-runtime (the pinned version in package.json), made when
// scripts/build.mjs bundles it into dist/sandbox-runtime.cjs. Each takes work off every
// sandboxed command (docs/performance.md, "Per sandboxed call") that the library's options
// cannot turn off, and none changes what a command may reach, read or write.
//
// Every edit is an exact text that must occur exactly once in the named file of the package:
// when the library changes under it (a version bump), the build fails naming the patch,
// rather than shipping the library without it. Each patch says what the library would need
// upstream for it to go away. test/build/sandbox-patches.test.ts checks every patch is in the
// built bundle (each `mark`, a string literal that survives minifying) and what it changes.
import { readFile } from "node:fs/promises";

const LINUX = "dist/sandbox/linux-sandbox-utils.js";

/** @type {{ name: string, file: string, why: string, mark: string, edits: { find: string, replace: string }[] }[]} */
export const SANDBOX_PATCHES = [
  {
    name: "one-relay",
    file: LINUX,
    why: "The library starts two socat relays inside the sandbox for every command, HTTP on 3128 and SOCKS on 1080, " +
      "and holds the command until both listen. When both host bridges are one socket (its mux proxy, which tells " +
      "SOCKS from HTTP by the first byte: always so for Keen, which sets no external proxy ports), the 3128 relay " +
      "already serves both, so the SOCKS variables name 3128 and the second relay is not started (~35 ms of CPU per " +
      "command). Upstream: buildSandboxCommand starting one relay, and the env naming its port, in the mux case.",
    mark: "_srt_socks=$_srt_http",
    edits: [
      {
        find: `    const socatCommands = [
        relay(3128, httpSocketPath),
        '_srt_http=$!',
        relay(1080, socksSocketPath),
        '_srt_socks=$!',`,
        replace: `    const oneRelay = socksSocketPath === httpSocketPath;
    const socatCommands = [
        relay(3128, httpSocketPath),
        '_srt_http=$!',
        ...(oneRelay ? ['_srt_socks=$_srt_http', '_srt_want=1'] : [relay(1080, socksSocketPath), '_srt_socks=$!', '_srt_want=2']),`,
      },
      { find: `'  [ "$_srt_up" -lt 2 ] || break',`, replace: `'  [ "$_srt_up" -lt "$_srt_want" ] || break',` },
      { find: `'unset _srt_since _srt_now `, replace: `'unset _srt_want _srt_since _srt_now ` },
      {
        find: `                1080, // Internal SOCKS listener port`,
        replace: `                socksSocketPath === httpSocketPath ? 3128 : 1080, // Internal SOCKS listener port (one relay for the mux: Keen patch)`,
      },
    ],
  },
  {
    name: "relay-wait-pauses",
    file: LINUX,
    why: "The command waits until the relay listens (at most 0.3 s), polling /proc/net/sockstat in a loop that " +
      "never pauses, since `sleep` would be a program started before the seccomp filter: on a busy machine the " +
      "loop takes the CPU the relay needs to start (~30 ms of CPU per command). Under bash (not in POSIX mode) each " +
      "round now pauses 2 ms in `read -t` on a pipe the shell holds both ends of (made by `<(:)`, a subshell that " +
      "runs the builtin `:`): still no program is started, and the fd is closed before the command. Other shells " +
      "poll as before. Upstream: the same pause, or the relay announcing itself on a pipe the shell reads.",
    mark: 'read -t 0.002 -u "$_srt_fd"',
    edits: [
      {
        find: `        ...RELAYS_LISTEN,
    ];`,
        replace: `        '_srt_fd=',
        ...(path.basename(shellPath) === 'bash'
            ? ['case :$SHELLOPTS: in *:posix:*) ;; *) eval "exec {_srt_fd}<> <(:)" 2>/dev/null ;; esac']
            : []),
        ...RELAYS_LISTEN,
    ];`,
      },
      {
        find: `'  read -r _srt_now _srt_skip 2>/dev/null < /proc/uptime || break',`,
        replace: `'  [ -z "$_srt_fd" ] || read -t 0.002 -u "$_srt_fd"',
    '  read -r _srt_now _srt_skip 2>/dev/null < /proc/uptime || break',`,
      },
      {
        find: `    'done',
    'unset `,
        replace: `    'done',
    '[ -z "$_srt_fd" ] || eval "exec {_srt_fd}<&-"',
    'unset _srt_fd `,
      },
    ],
  },
  {
    name: "relay-wait-longer",
    file: LINUX,
    why: "The command waits for the relay to listen at most 0.3 s, then starts anyway: on a loaded machine (the " +
      "e2e suite with three workers on two cores) socat took longer, and the command's first connection to the " +
      "proxy was refused (`curl: (7) Failed to connect to localhost port 3128`). The wait now gives up after 5 s; it " +
      "still ends the moment the relay listens or exits, so an unloaded command waits as before. Upstream: a longer " +
      "bound, or the relay announcing itself on a pipe the shell reads.",
    mark: "keen-relay-wait-5s",
    edits: [
      {
        find: `'  [ "$((_srt_now - \${_srt_since:=$_srt_now}))" -lt 30 ] || break',`,
        replace: `'  [ "$((_srt_now - \${_srt_since:=$_srt_now}))" -lt 500 ] || break # keen-relay-wait-5s',`,
      },
    ],
  },
  {
    name: "one-shell-around-relays",
    file: LINUX,
    why: "bubblewrap already runs the relays' script with `<shell> -c`, and the library wraps it in a second " +
      "`<shell> -c` that does nothing but exec the first: one shell start per command (~9 ms). The script is " +
      "given to bubblewrap's shell as it is. Upstream: buildSandboxCommand returning the script, not a shell around it.",
    mark: "keen-one-shell",
    edits: [
      {
        find: `        const innerScript = [...socatCommands, applySeccompCmd].join('\\n');
        return \`\${shellPath} -c \${quote([innerScript])}\`;`,
        replace: `        const innerScript = [...socatCommands, applySeccompCmd].join('\\n');
        return ': keen-one-shell\\n' + innerScript;`,
      },
    ],
  },
  {
    name: "shell-path-as-given",
    file: LINUX,
    why: "The library runs `which <shell>` synchronously on every wrap (~14 ms), even for an absolute path, where " +
      "`which` answers that path when it is executable. That answer is now given without the spawn; a name still " +
      "goes to `which`. Keen passes the bash it found on PATH. Upstream: whichSync skipping absolute paths.",
    mark: "keen-shell-as-given",
    edits: [
      {
        find: `        const shell = whichSync(shellName);`,
        replace: `        const shellAsGiven = path.isAbsolute(shellName) && isExecutable(shellName);
        if (shellAsGiven)
            logForDebugging('[Sandbox Linux] keen-shell-as-given: ' + shellName);
        const shell = shellAsGiven ? shellName : whichSync(shellName);`,
      },
    ],
  },
  {
    name: "no-scan-of-empty-cwd",
    file: LINUX,
    why: "On every wrap ripgrep lists the working directory for dangerous files in subdirectories (a spawn, ~15 ms). " +
      "Keen wraps from an empty directory the sandbox cannot write (app/sandbox/runtime.ts, outsideWorkspace), where " +
      "that scan finds nothing by construction: a directory with no entries is not scanned. One that cannot be " +
      "listed still is. Upstream: the same check, or an option for callers that protect those files themselves.",
    mark: "keen-empty-cwd",
    edits: [
      {
        find: `    let matches = [];
    try {
        matches = await ripGrep([`,
        replace: `    let matches = [];
    let cwdIsEmpty = false;
    try {
        cwdIsEmpty = fs.readdirSync(cwd).length === 0;
    }
    catch {
        // Not listed here: ripgrep says what it finds, as before.
    }
    if (cwdIsEmpty)
        logForDebugging('[Sandbox] keen-empty-cwd: no ripgrep scan of an empty working directory');
    else try {
        matches = await ripGrep([`,
      },
    ],
  },
];

/** `text` with `patch`'s edits made; throws naming the patch when an edit does not match exactly once. */
export function applyPatch(text, patch) {
  for (const [i, { find, replace }] of patch.edits.entries()) {
    const at = text.indexOf(find);
    const count = at < 0 ? 0 : text.split(find).length - 1;
    if (count !== 1) {
      throw new Error(
        `sandbox patch "${patch.name}" (edit ${i + 1} of ${patch.edits.length}): its text occurs ${count} times in ` +
        `@anthropic-ai/sandbox-runtime/${patch.file}, not once. The library changed: re-check the patch in scripts/sandbox-patches.mjs.`,
      );
    }
    text = text.slice(0, at) + replace + text.slice(at + find.length);
  }
  return text;
}

/** The esbuild plugin for the library's bundle; the build fails unless every patch was applied. */
export function sandboxPatches(patches = SANDBOX_PATCHES) {
  return {
    name: "sandbox-patches",
    setup(build) {
      if (!patches.length) throw new Error("sandbox patches: the list is empty");
      const files = [...new Set(patches.map((p) => p.file))];
      const applied = new Set();
      const escaped = files.map((f) => f.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&").replace(/\\\//g, "[\\\\/]"));
      const filter = new RegExp(`[\\\\/]@anthropic-ai[\\\\/]sandbox-runtime[\\\\/](${escaped.join("|")})$`);
      build.onStart(() => applied.clear());
      build.onLoad({ filter }, async (args) => {
        const file = files.find((f) => args.path.replaceAll("\\", "/").endsWith(`/@anthropic-ai/sandbox-runtime/${f}`));
        let text = await readFile(args.path, "utf8");
        for (const patch of patches.filter((p) => p.file === file)) {
          text = applyPatch(text, patch);
          applied.add(patch.name);
        }
        return { contents: text, loader: "js" };
      });
      build.onEnd((result) => {
        if (result.errors.length) return;
        const missing = patches.filter((p) => !applied.has(p.name)).map((p) => `"${p.name}" (${p.file})`);
        if (missing.length) {
          return { errors: [{ text: `sandbox patches not applied, their file was not bundled: ${missing.join(", ")}` }] };
        }
      });
    },
  };
}
