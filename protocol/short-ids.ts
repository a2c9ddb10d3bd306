// Session ids as people see them: `keen sessions list` and the TUI's /sessions picker show the same short ids.

/** Each id's shortest prefix no other id shares, at least 8 characters (ids start with their creation time), never ending in "-". */
export function uniquePrefixes(ids: string[]): Map<string, string> {
  const sorted = [...ids].sort();
  const common = (a: string | undefined, b: string) => {
    let i = 0;
    while (a !== undefined && i < a.length && a[i] === b[i]) i++;
    return i;
  };
  const out = new Map<string, string>();
  sorted.forEach((id, i) => {
    let length = Math.max(8, common(sorted[i - 1], id) + 1, common(sorted[i + 1], id) + 1);
    if (id[length - 1] === "-") length++;
    out.set(id, id.slice(0, length));
  });
  return out;
}
