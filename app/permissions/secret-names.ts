// Committed templates of .env files hold no secrets and the model needs them to explain setup.
const ENV_TEMPLATES = new Set([".env.example", ".env.sample", ".env.template", ".env.dist"]);
const CREDENTIAL_NAMES = new Set(["credentials.json", ".netrc", ".git-credentials", ".pgpass", ".htpasswd"]);
// Directories that hold keys wherever they are: a copied home in a backup, a container volume.
const CREDENTIAL_DIRS = new Set([".ssh", ".gnupg", ".aws", ".azure", ".password-store"]);

/** Why a file name looks secret, or undefined. Public keys (`*.pub`) are not secret. */
export function secretFileKind(name: string): string | undefined {
  const n = name.toLowerCase();
  if (n === ".envrc" || n.endsWith(".env") || (n.startsWith(".env.") && !ENV_TEMPLATES.has(n))) {
    return "an environment file (.env.example, .env.sample, .env.template and .env.dist are allowed)";
  }
  if (/^id_(rsa|dsa|ecdsa|ed25519)/.test(n) && !n.endsWith(".pub")) return "an SSH private key";
  if (/^ssh_host_.*_key$/.test(n)) return "an SSH host key";
  if (/\.(pem|key|p12|pfx|jks|keystore|kdbx)$/.test(n)) return "a key or certificate file";
  if (CREDENTIAL_NAMES.has(n)) return "a credential file";
  return undefined;
}

/**
 * Why a directory name looks secret, or undefined. The file rules apply to directories
 * too (`secrets.env/`, `tls.key/`, `id_rsa/`), except a directory named exactly `.env`:
 * that is the conventional name of a Python virtualenv, not a secret. Credential
 * directories (`.ssh`, `.gnupg`, `.aws`, …) are refused wherever they are.
 */
export function secretDirKind(name: string): string | undefined {
  const n = name.toLowerCase();
  if (CREDENTIAL_DIRS.has(n)) return "a credential directory";
  if (n === ".env") return undefined;
  return secretFileKind(n);
}
