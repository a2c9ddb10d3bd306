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

/**
 * The name rules above as glob patterns below a directory, for the sandbox's read denies
 * (bash cannot be asked per file the way the file tools are). Built from the same lists;
 * where a glob cannot say what the rule says it errs on the side of hiding: any case
 * variant is not matched (the rules ignore case), but a directory named `.env` and the
 * `.env` templates are hidden too, and so are public keys next to their private key.
 */
export function secretNameGlobs(): string[] {
  const files = [".env", "*.env", ".env.*", ".envrc", "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "ssh_host_*_key"];
  const extensions = ["pem", "key", "p12", "pfx", "jks", "keystore", "kdbx"].map((ext) => `*.${ext}`);
  return [...files, ...extensions, ...CREDENTIAL_NAMES, ...CREDENTIAL_DIRS].map((name) => `**/${name}`);
}
