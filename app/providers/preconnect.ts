import type { Agent } from "node:http";
import type { Socket } from "node:net";
import { traceStartup } from "../startup-trace.js";

/**
 * Pre-connect: the TCP (and TLS) handshake to the provider, started as soon as
 * the base URL is known, so it runs while Keen opens its store, builds the
 * prompt and starts tools, instead of after. Over a real link that is 2–3
 * round trips the first request no longer waits for.
 *
 * The socket is handed to the first request by the keep-alive agent of
 * app/providers/http-fetch.ts (`providerAgent`), or, when Node's fetch makes
 * the request (a cassette's recorder), through a dispatcher made from Node's
 * own fetch implementation (the class of its global dispatcher, so the
 * interfaces match on every Node version; undici from npm costs ~10× more to
 * load). Nothing here connects unless `preconnect` is called, and the callers
 * call it only when a request will follow (not for replay, cassettes, the CLI
 * runner, `--version`, `sessions` or usage errors). With a proxy variable set
 * the request goes through the proxy agent and no socket is opened early.
 * KEEN_PRECONNECT=off turns it off (a network that frowns on idle connections;
 * the bench's comparison).
 */

/** How long an unused early socket is kept: servers close idle connections (often after 60 s), and a dead socket costs a retry. */
const FRESH_MS = 20_000;
/** undici's default connect timeout. */
const CONNECT_TIMEOUT_MS = 10_000;
const GLOBAL_DISPATCHER = Symbol.for("undici.globalDispatcher.1");

interface Warm {
  key: string;
  socket: Socket;
  ready: Promise<boolean>;
  at: number;
}

let warm: Warm | undefined;

interface Target {
  protocol: string;
  hostname: string;
  port: number;
}

function targetOf(url: string): Target | undefined {
  try {
    const u = new URL(url);
    if (u.protocol !== "https:" && u.protocol !== "http:") return undefined;
    const hostname = u.hostname.replace(/^\[(.*)\]$/, "$1");
    return { protocol: u.protocol, hostname, port: Number(u.port || (u.protocol === "https:" ? 443 : 80)) };
  } catch {
    return undefined;
  }
}

const keyOf = (t: Target) => `${t.protocol}//${t.hostname}:${t.port}`;

/**
 * node:net and node:tls, loaded at the first connect: modules the start-up snapshot evaluates
 * (app/cli/warm.ts) must not hold tls's native bindings, which V8 cannot serialise. Every Node
 * Keen supports (engines: 20.19+, 22.12+) has process.getBuiltinModule.
 */
const net = () => process.getBuiltinModule("node:net");
const tls = () => process.getBuiltinModule("node:tls");

/** Opens a socket to `t`; resolves it once connected (TLS: once the handshake is done), or rejects. */
function open(t: Target): { socket: Socket; ready: Promise<Socket> } {
  const socket =
    t.protocol === "https:"
      ? tls().connect({ host: t.hostname, port: t.port, servername: net().isIP(t.hostname) ? undefined : t.hostname, ALPNProtocols: ["http/1.1"] })
      : net().connect({ host: t.hostname, port: t.port });
  socket.setNoDelay(true);
  const ready = new Promise<Socket>((resolve, reject) => {
    const timer = setTimeout(() => socket.destroy(new Error(`connect timeout after ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    timer.unref();
    socket.once(t.protocol === "https:" ? "secureConnect" : "connect", () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
  return { socket, ready };
}

/**
 * Starts the handshake to `baseURL`'s host unless a proxy applies or one is already under way; true when it
 * started one. Never throws, never holds the process open.
 */
export function preconnect(baseURL: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const target = targetOf(baseURL);
  if (!target || warm || proxied(target, env) || env.KEEN_PRECONNECT === "off") return false;
  const { socket, ready } = open(target);
  traceStartup("preconnect: socket opened");
  socket.once("connect", () => traceStartup("preconnect: tcp connected"));
  socket.once("secureConnect", () => traceStartup("preconnect: tls handshake done"));
  // An idle early socket must not keep a finished process alive; undici refs it while a request uses it.
  socket.unref();
  warm = {
    key: keyOf(target),
    socket,
    ready: ready.then(
      () => true,
      () => false,
    ),
    at: Date.now(),
  };
  return true;
}

/**
 * A preconnect held back until `release()`, for a front end whose first request waits on something of its own
 * (`keen run`: a prompt still to be read from stdin; the TUI: its first frame). `preconnect` goes in the host's
 * settings in place of the default; `release` then starts the handshake, once, if set-up asked for one.
 */
export function deferredPreconnect(): { preconnect: (baseURL: string, env: NodeJS.ProcessEnv) => void; release: () => void } {
  let asked: [string, NodeJS.ProcessEnv] | undefined;
  return {
    preconnect: (baseURL, env) => void (asked = [baseURL, env]),
    release: () => {
      if (asked) preconnect(...asked);
      asked = undefined;
    },
  };
}

/** Whether an early socket was started in this process (the fetch then routes through `warmDispatcher`). */
export function hasPreconnect(): boolean {
  return warm !== undefined;
}

function proxied(t: Target, env: NodeJS.ProcessEnv): boolean {
  const names = t.protocol === "https:" ? ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] : ["HTTP_PROXY", "http_proxy"];
  return names.some((n) => (env[n] ?? "").trim() !== "");
}

interface ConnectOptions {
  hostname: string;
  protocol: string;
  port: string;
}
type Callback = (err: Error | null, socket: Socket | null) => void;

/** The connector the dispatcher uses: the early socket for its host the first time, a fresh one after. */
async function connect(options: ConnectOptions, callback: Callback): Promise<void> {
  const target: Target = {
    protocol: options.protocol,
    hostname: options.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: Number(options.port || (options.protocol === "https:" ? 443 : 80)),
  };
  const early = await takeEarly(target);
  if (early) return callback(null, early);
  open(target).ready.then(
    (socket) => callback(null, socket),
    (err: Error) => callback(err, null),
  );
}

/**
 * The early socket for `target`, if it was opened for that host and is still good, else undefined; taken once.
 * Resolves when its handshake is done (a failed or stale one resolves undefined, and is closed).
 */
async function takeEarly(target: Target): Promise<Socket | undefined> {
  const early = warm?.key === keyOf(target) ? warm : undefined;
  if (!early) return undefined;
  traceStartup("request: asks for the early socket");
  warm = { ...early, key: "" };
  const ok = await early.ready;
  if (ok && !early.socket.destroyed && Date.now() - early.at < FRESH_MS) {
    // Unref'd while idle; a request in flight must hold the process (the agent unrefs it again when it is idle).
    early.socket.ref();
    traceStartup("request: takes the early socket");
    return early.socket;
  }
  early.socket.destroy();
  return undefined;
}

type CreateConnection = (options: { host?: string; hostname?: string; port?: number | string }, callback: (err: Error | null, socket?: Socket) => void) => Socket | undefined;
const agents = new Map<string, Agent>();

/**
 * The keep-alive agent for the providers' requests over `protocol` (app/providers/http-fetch.ts), whose first
 * connection to the early socket's host is that socket. One per protocol for the process: a run's later
 * requests reuse its connection.
 */
export function providerAgent(protocol: "http:" | "https:"): Agent {
  const known = agents.get(protocol);
  if (known) return known;
  const module = process.getBuiltinModule(protocol === "https:" ? "node:https" : "node:http") as { Agent: new (options: object) => Agent };
  const agent = new module.Agent({ keepAlive: true });
  const plain = (agent as unknown as { createConnection: CreateConnection }).createConnection.bind(agent);
  (agent as unknown as { createConnection: CreateConnection }).createConnection = (options, callback) => {
    const hostname = String(options.hostname ?? options.host ?? "").replace(/^\[(.*)\]$/, "$1");
    const target: Target = { protocol, hostname, port: Number(options.port || (protocol === "https:" ? 443 : 80)) };
    if (warm?.key !== keyOf(target)) return plain(options, callback);
    void takeEarly(target).then((socket) => {
      if (socket) return callback(null, socket);
      const fresh = plain(options, callback);
      if (fresh) callback(null, fresh);
    });
    return undefined;
  };
  agents.set(protocol, agent);
  return agent;
}

type DispatcherClass = new (options: { connect: typeof connect }) => object;
let dispatcher: object | undefined;

/**
 * A dispatcher of Node's fetch whose first connection is the early socket, or
 * undefined where Node's fetch does not expose its dispatcher class (then the
 * request connects as usual).
 */
export function warmDispatcher(): object | undefined {
  if (dispatcher) return dispatcher;
  void globalThis.Headers; // loads Node's fetch, which installs its global dispatcher
  const global = (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER] as { constructor?: unknown } | undefined;
  if (typeof global?.constructor !== "function") return undefined;
  dispatcher = new (global.constructor as DispatcherClass)({ connect });
  return dispatcher;
}

/** Drops the early socket, the agents and the dispatcher (their idle sockets close): for a host that opens a second session with other settings, and for tests. */
export async function closePreconnect(): Promise<void> {
  warm?.socket.destroy();
  warm = undefined;
  for (const agent of agents.values()) agent.destroy();
  agents.clear();
  const d = dispatcher as { close?: () => Promise<void> } | undefined;
  dispatcher = undefined;
  await d?.close?.();
}
