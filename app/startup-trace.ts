/**
 * KEEN_TRACE_STARTUP=1: one stderr line per start-up milestone (`keen-trace <ms since the process started> <event>`):
 * set-up's stages, the early socket's connect and TLS handshake, the request's hand-over and first byte, the
 * first delta. It shows whether the handshake finished behind set-up or the request waited for it
 * (docs/performance.md, "Fifth pass"). KEEN_TRACE_STARTUP=2 adds the `detail` points (the first request built and
 * held while its user-message is stored, then released: "Sixth pass"). Off: one environment read per milestone.
 * The variable is read at each call, never at load: the start-up snapshot evaluates this module at build time.
 */
export function traceStartup(event: string, detail = false): void {
  const level = process.env.KEEN_TRACE_STARTUP;
  if (level !== "2" && (level !== "1" || detail)) return;
  process.stderr.write(`keen-trace ${performance.now().toFixed(1)} ${event}\n`);
}

/**
 * With the trace on, also the first request's headers leaving and the response's arriving, from the diagnostics
 * channels of node:http (app/providers/http-fetch.ts) and of undici (a proxy's fetch). No listener on the socket
 * itself: a 'data' listener would take its bytes from the client. (node:http publishes its "response.finish"
 * once the response's headers are parsed.)
 */
export function traceRequests(): void {
  const level = process.env.KEEN_TRACE_STARTUP;
  if (level !== "1" && level !== "2") return;
  const channels = process.getBuiltinModule("node:diagnostics_channel");
  // The first message on any of the names, traced once.
  const once = (event: string, ...names: string[]) => {
    const listener = () => {
      for (const name of names) channels.unsubscribe(name, listener);
      traceStartup(event);
    };
    for (const name of names) channels.subscribe(name, listener);
  };
  once("request: headers sent", "http.client.request.start", "undici:client:sendHeaders");
  once("request: response headers", "http.client.response.finish", "undici:request:headers");
}
