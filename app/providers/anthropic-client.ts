import { BaseAnthropic, type ClientOptions } from "@anthropic-ai/sdk/client";
import { Messages } from "@anthropic-ai/sdk/resources/messages";

/**
 * The official Anthropic client with only the Messages resource. Why: the
 * full `Anthropic` class also constructs Models, Files, Skills, Beta, … and
 * bundling it costs ~310 KB more JavaScript to parse on every run; the SDK is
 * built for this (`BaseAnthropic` is exported, `sideEffects: false`), so
 * esbuild drops the rest. Loaded with `await import()` by the provider.
 */
export class MessagesClient extends BaseAnthropic {
  messages: Messages = new Messages(this);
}

/** Builds the client; the provider passes its auth, fetch and retry settings. */
export function createMessagesClient(options: ClientOptions): MessagesClient {
  return new MessagesClient(options);
}
