import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before } from "node:test";

/**
 * A second local server for this file: `roundTrip()` makes a whole request to it and reads the answer,
 * which gives a request that should not leave (one held for the store) every chance to leave first.
 */
export function useRoundTrip(): () => Promise<void> {
  let echo: Server;
  before(async () => {
    echo = createServer((_req, res) => res.end("ok"));
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
  });
  after(() => new Promise<void>((resolve) => echo.close(() => resolve())));
  return async () => {
    await (await fetch(`http://127.0.0.1:${(echo.address() as AddressInfo).port}/`)).text();
  };
}
