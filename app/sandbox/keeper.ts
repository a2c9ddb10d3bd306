/*
 * The shell between the sandbox's seccomp helper and a command (Linux), written by runtime.ts into
 * every wrap.
 */

/**
 * The command under a silent keeper shell. The seccomp helper's PID namespace ends (every
 * process in it SIGKILLed) when its first process does, so a stopped command's shell, which
 * dies of its SIGTERM at once, would take the TERM handlers of its children down with it.
 * The keeper outlives a TERM (its trap), and then stays until no other process of that
 * namespace is left (Keen's SIGKILL ends the wait after the grace); its own stderr is
 * /dev/null, where bash's "Terminated" for its child goes. Without a TERM it exits with the
 * command, background jobs ending with the namespace as before.
 *
 * Without `command`, a spare's keeper (spare.ts): it waits for its command on stdin, NUL-ended
 * (EOF without one, when Keen discards the spare, ends it), and runs it with stdin /dev/null.
 */
export function keeper(command?: string): string {
  // Other processes of the innermost PID namespace: NSpid lists one pid per namespace.
  const others = `keen_others() { local f l n=0; for f in /proc/[0-9]*/status; do while read -r l; do case $l in NSpid:*) set -- $l; [ "$#" -ge 3 ] && [ "$3" != 1 ] && [ "$3" != "$$" ] && n=$((n + 1)); break;; esac; done < "$f"; done; [ "$n" -gt 0 ]; }`;
  return [
    "exec 3>&2 2>/dev/null",
    others,
    "trap 'keen_term=1' TERM",
    ...(command === undefined
      ? ["IFS= read -r -d '' keen_command || exit 125", "exec </dev/null", 'bash -c "$keen_command" 2>&3 3>&-']
      : [`bash -c ${shellQuote(command)} 2>&3 3>&-`]),
    "keen_rc=$?",
    'if [ -n "$keen_term" ]; then while keen_others; do sleep 0.05; done; fi',
    "exit $keen_rc",
  ].join("\n");
}

/** `word` as one bash word. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
