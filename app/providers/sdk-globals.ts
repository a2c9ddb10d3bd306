/**
 * What the bundled SDKs get for the globals `Headers` and `FormData` (scripts/build.mjs, "sdk-globals", binds
 * their references to these). Touching either global loads all of Node's fetch (its bundled undici, 21–30 ms
 * at every start), and the SDKs touch both for every request: `new Headers()` for its headers, `body instanceof
 * FormData` for its body. The requests themselves go through ./http-fetch.ts, which needs none of it.
 */

/**
 * The SDKs' `FormData`: constructing one is Node's (a file upload, which loads Node's fetch then); `instanceof`
 * asks the object's own tag, and so never loads it for a request whose body is JSON.
 */
export const SdkFormData: new (...args: unknown[]) => object = new Proxy(function FormData() {} as unknown as new (...args: unknown[]) => object, {
  construct: (_target, args) => new (globalThis.FormData as new (...a: unknown[]) => object)(...args),
  get: (target, key, receiver) =>
    key === Symbol.hasInstance
      ? (value: unknown) => value !== null && typeof value === "object" && Object.prototype.toString.call(value) === "[object FormData]"
      : Reflect.get(target, key, receiver),
});

/**
 * The SDKs' `Headers`.
 * The parts of WHATWG Headers the SDKs and Keen use: names are case-insensitive and kept lower-case,
 * `append` joins values with ", ", iteration is in name order. Values are checked as Node's http checks
 * them (no CR, LF or NUL), since they go on the wire through node:http. Without the bundle (tests run
 * from source) the SDKs use Node's Headers, and everything here accepts those too.
 */
export class SdkHeaders implements Iterable<[string, string]> {
  readonly #map = new Map<string, string>();

  constructor(init?: HeadersInitLike) {
    if (init === undefined || init === null) return;
    if (typeof (init as Iterable<unknown>)[Symbol.iterator] === "function") {
      for (const pair of init as Iterable<ArrayLike<string>>) {
        if (pair.length !== 2) throw new TypeError("Headers: each header must be a [name, value] pair");
        this.append(pair[0]!, pair[1]!);
      }
    } else {
      for (const [name, value] of Object.entries(init as Record<string, string>)) this.append(name, value);
    }
  }

  append(name: string, value: string): void {
    const key = checkName(name);
    const text = checkValue(value);
    const had = this.#map.get(key);
    this.#map.set(key, had === undefined ? text : `${had}, ${text}`);
  }

  set(name: string, value: string): void {
    this.#map.set(checkName(name), checkValue(value));
  }

  get(name: string): string | null {
    return this.#map.get(String(name).toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.#map.has(String(name).toLowerCase());
  }

  delete(name: string): void {
    this.#map.delete(String(name).toLowerCase());
  }

  getSetCookie(): string[] {
    const value = this.#map.get("set-cookie");
    return value === undefined ? [] : [value];
  }

  forEach(callback: (value: string, name: string, headers: SdkHeaders) => void, thisArg?: unknown): void {
    for (const [name, value] of this) callback.call(thisArg, value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.#map.keys()].sort()) yield [name, this.#map.get(name)!];
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  get [Symbol.toStringTag](): string {
    return "Headers";
  }
}

type HeadersInitLike = Iterable<ArrayLike<string>> | Record<string, string>;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

function checkName(name: string): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Headers: invalid header name "${text}"`);
  return text.toLowerCase();
}

function checkValue(value: string): string {
  // Leading and trailing whitespace goes, as the fetch standard normalises it.
  const text = String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
  if (/[\r\n\0]/.test(text)) throw new TypeError("Headers: invalid header value");
  return text;
}
