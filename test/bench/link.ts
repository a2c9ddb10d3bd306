/**
 * A real-shaped link for `npm run bench`: the mock LLM server behind TLS (a
 * self-signed certificate made with `openssl`, trusted by the children through
 * NODE_EXTRA_CA_CERTS) and behind a user-space TCP relay that holds every
 * chunk for half the round-trip time in each direction.
 *
 * Why a relay and not `tc netem` in a network namespace: netem needs
 * CAP_NET_ADMIN, which CI's runners need not grant; the relay needs nothing.
 * What it cannot delay is the TCP handshake itself (the kernel answers the SYN
 * on loopback), so a connection costs one round trip less than over a real
 * link: TLS 1.3's one round trip plus the request's. Pre-connect's gain is
 * understated by that one round trip, never overstated.
 *
 * Data is forwarded in arrival order with a fixed delay (a queue per
 * direction), so the relay reorders nothing and adds latency, not bandwidth limits.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import net, { type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import tls from "node:tls";

export interface Link {
  /** https://127.0.0.1:<port>: the mock, over TLS, through the delaying relay (an address, so no resolver differs between sides). */
  url: string;
  /** PEM file the children trust (NODE_EXTRA_CA_CERTS). */
  caFile: string;
  rttMs: number;
  close(): Promise<void>;
}

/** Starts the link to the plain-HTTP `targetUrl`, or says why it cannot. */
export async function startLink(targetUrl: string, rttMs: number): Promise<Link | { skip: string }> {
  const dir = mkdtempSync(join(tmpdir(), "keen-bench-link-"));
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  try {
    execFileSync("openssl", [
      "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
      "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", key, "-out", cert,
    ], { stdio: "ignore" });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return { skip: "openssl is not available to make the bench's certificate" };
  }
  const target = new URL(targetUrl);
  const front = tls.createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (clear) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    clear.pipe(upstream).pipe(clear);
    clear.on("error", () => upstream.destroy());
    upstream.on("error", () => clear.destroy());
  });
  const frontPort = await listen(front);
  const relay = net.createServer((client) => {
    const server = net.connect(frontPort, "127.0.0.1");
    delayed(client, server, rttMs / 2);
    delayed(server, client, rttMs / 2);
  });
  const port = await listen(relay);
  return {
    url: `https://127.0.0.1:${port}`,
    caFile: cert,
    rttMs,
    async close() {
      await Promise.all([close(relay), close(front)]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Forwards `from` → `to`, each chunk (and the end) `delayMs` after it arrived. */
function delayed(from: Socket, to: Socket, delayMs: number): void {
  from.setNoDelay(true);
  from.on("data", (chunk) => setTimeout(() => to.write(chunk), delayMs));
  from.on("end", () => setTimeout(() => to.end(), delayMs));
  from.on("error", () => to.destroy());
  from.on("close", () => setTimeout(() => to.destroy(), delayMs + 1));
}

const open = new WeakMap<net.Server, Set<Socket>>();

function listen(server: net.Server): Promise<number> {
  const sockets = new Set<Socket>();
  open.set(server, sockets);
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)));
}

/** Stops `server` and drops its connections (a keep-alive connection would hold close() open). */
function close(server: net.Server): Promise<void> {
  return new Promise((resolve) => {
    for (const socket of open.get(server) ?? []) socket.destroy();
    server.close(() => resolve());
  });
}
