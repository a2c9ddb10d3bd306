import { UsageError } from "./errors.js";
import { validateRunFlags, type RunFlags } from "./run-flags.js";
import { stdioCommand } from "./stdio.js";

/** `keen run --headless --input-format jsonl`: the same as `keen stdio`, with run's flag checks. */
export async function stdioFromRun(message: string[], flags: RunFlags & { inputFormat?: string }, formatGiven: boolean): Promise<number> {
  if (!flags.headless) throw new UsageError("--input-format jsonl needs --headless (or use keen stdio)");
  if (message.length) throw new UsageError("--input-format jsonl reads prompts as commands on stdin; pass no message");
  return stdioFromFlags({ ...flags, streamDeltas: true }, formatGiven);
}

/** `keen stdio [flags]` */
export async function stdioFromFlags(flags: Omit<RunFlags, "stdin"> & { stdin?: boolean }, formatGiven = false): Promise<number> {
  const settings = validateRunFlags({ ...flags, stdin: true, headless: true, streamDeltas: true }, formatGiven);
  return stdioCommand(settings);
}
