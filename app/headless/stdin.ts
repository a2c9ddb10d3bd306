import { fstatSync } from "node:fs";

/** The assembled prompt and an optional note for stderr. */
export interface PromptInput {
  prompt: string;
  note?: string;
}

/** How stdin may be used. */
export interface StdinOptions {
  /** `--no-stdin`: never touch it. */
  skip: boolean;
  /** With args present, a pipe that brings no byte within this is ignored. */
  graceMs: number;
  /** `--timeout`: reading stdin (to EOF) takes at most this long, args or not; then StdinTimeoutError. */
  timeoutMs?: number;
  stream?: NodeJS.ReadStream;
  fd?: number;
  /** `--binary-stdin`: send stdin that is not text (NUL bytes, invalid UTF-8) anyway, decoded lossily. */
  allowBinary?: boolean;
}

/** stdin that is not text, refused unless `allowBinary`. */
export class BinaryStdinError extends Error {}

/** The prompt did not arrive on stdin within `--timeout`; a fatal error with exit code 1, as a run's timeout. */
export class StdinTimeoutError extends Error {
  readonly exitCode = 1;
  constructor(timeoutMs: number) {
    super(`timed out after ${(timeoutMs / 1000).toFixed(1)}s waiting for the prompt on stdin (--timeout; use --no-stdin to skip it)`);
  }
}

/**
 * Joins args and piped stdin: args alone, stdin alone, or args + "\n" + stdin.
 * stdin is read only when fstat says pipe, socket (what Node's `spawn` gives a
 * child) or regular file — never from a TTY. Contract: never hangs on a pipe
 * left open by a spawning program when args are present, nor past `timeoutMs`.
 */
export async function readPrompt(args: string[], options: StdinOptions): Promise<PromptInput> {
  const fromArgs = args.join(" ");
  if (options.skip || !stdinIsData(options.fd ?? 0)) return { prompt: fromArgs };
  const stream = options.stream ?? process.stdin;
  const bytes = await readAll(stream, fromArgs ? options.graceMs : undefined, options.timeoutMs);
  const text = bytes === undefined ? undefined : decode(bytes, options.allowBinary === true);
  if (text === undefined) {
    return { prompt: fromArgs, note: `keen: stdin brought no data within ${options.graceMs} ms; ignoring it (use --no-stdin to skip it)` };
  }
  const piped = text.replace(/\r?\n$/, "");
  if (!fromArgs) return { prompt: piped };
  return { prompt: piped ? `${fromArgs}\n${piped}` : fromArgs };
}

function decode(bytes: Buffer, allowBinary: boolean): string {
  if (!allowBinary) {
    const nul = bytes.indexOf(0);
    if (nul >= 0) throw new BinaryStdinError(`stdin is not text (a NUL byte at offset ${nul} of ${bytes.length}); pass --binary-stdin to send it anyway`);
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    } catch {
      throw new BinaryStdinError(`stdin is not valid UTF-8 text (${bytes.length} bytes); pass --binary-stdin to send it anyway`);
    }
  }
  return bytes.toString("utf8");
}

function stdinIsData(fd: number): boolean {
  try {
    const stat = fstatSync(fd);
    return stat.isFIFO() || stat.isFile() || stat.isSocket();
  } catch {
    return false;
  }
}

/** Reads to EOF; `undefined` when `graceMs` passes before the first byte; StdinTimeoutError after `timeoutMs`. */
function readAll(stream: NodeJS.ReadStream, graceMs: number | undefined, timeoutMs: number | undefined): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    let deadline: NodeJS.Timeout | undefined;
    const cleanup = () => {
      clearTimeout(timer);
      clearTimeout(deadline);
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
    };
    const onData = (chunk: Buffer) => {
      clearTimeout(timer);
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const stop = () => {
      cleanup();
      stream.pause();
      stream.destroy();
    };
    if (graceMs !== undefined) {
      timer = setTimeout(() => {
        stop();
        resolve(undefined);
      }, graceMs);
    }
    if (timeoutMs !== undefined) {
      deadline = setTimeout(() => {
        stop();
        reject(new StdinTimeoutError(timeoutMs));
      }, timeoutMs);
    }
    stream.on("data", onData);
    stream.on("end", onEnd);
    stream.on("error", onError);
  });
}
