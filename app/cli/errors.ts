import type { ErrorCode } from "../../protocol/responses.js";

/** A failure before the run starts: one line on stderr, exit 2. `code`: what a client of the engine gets as `error_code`. */
export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string, readonly code?: ErrorCode) {
    super(message);
  }
}

/** A fatal CLI error carrying its exit code. */
export class ExitError extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
  }
}
