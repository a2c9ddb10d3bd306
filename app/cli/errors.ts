/** A failure before the run starts: one line on stderr, exit 2. */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/** A fatal CLI error carrying its exit code. */
export class ExitError extends Error {
  constructor(message: string, readonly exitCode: number) {
    super(message);
  }
}
