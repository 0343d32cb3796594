import { createPrivateKey, randomBytes, X509Certificate, webcrypto } from 'node:crypto';
import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type * as X509 from '@peculiar/x509';
import {
  makeDir,
  PRIVATE_MODE,
  PUBLIC_MODE,
  readPrivate as readPrivateFile,
  readRegularFile,
  writeFileSafely,
} from '../files.ts';

/** The local CA and the server certificate the emulator serves. */
export interface LocalCertificates {
  caPem: string;
  certPem: string;
  keyPem: string;
  /** `<state-dir>/ca.crt`: what clusters put in caBundle. */
  caPath: string;
  /** True when anything was created on this call. */
  created: boolean;
}

/** Names the server certificate always covers: the loopback names the API server may dial. */
export const SERVER_NAMES = { dns: ['localhost'], ip: ['127.0.0.1', '::1'] };

/** Subject alternative names of a server certificate. */
export interface ServerNames {
  dns: string[];
  ip: string[];
}

/** A DNS name as certificates carry it: labels of letters, digits and hyphens, a wildcard first label allowed. */
const DNS_NAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/**
 * Sorts `--san` values (and a public URL's host) into DNS names and IP addresses, adding
 * the loopback names; throws on a value that is neither.
 */
export function serverNames(extra: string[] = []): ServerNames {
  const dns = new Set(SERVER_NAMES.dns);
  const ip = new Set(SERVER_NAMES.ip);
  for (const raw of extra) {
    const value = raw.trim().replace(/^\[(.*)\]$/, '$1');
    if (isIP(value)) ip.add(value);
    else if (DNS_NAME.test(value) && value.length <= 253) dns.add(value.toLowerCase());
    else throw new Error(`${JSON.stringify(raw)} is neither a DNS name nor an IP address`);
  }
  return { dns: [...dns].sort(), ip: [...ip].sort() };
}

/** One line per name, so the names a certificate was issued for compare as text. */
function namesKey(names: ServerNames): string {
  return `${[...names.dns.map((d) => `DNS:${d}`), ...names.ip.map((i) => `IP:${i}`)].join('\n')}\n`;
}

// ECDSA P-256: fast to generate in WebCrypto and accepted by Go's TLS stack (the API server).
const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 86_400_000;
/** The CA lives long so manifests applied once keep working; server certificates are re-issued from it. */
const CA_DAYS = 3650;
const SERVER_DAYS = 365;
/** A server certificate this close to expiry is re-issued on start. */
const RENEW_BEFORE_DAYS = 7;

let x509Loaded: Promise<typeof X509> | undefined;

/**
 * @peculiar/x509 (after reflect-metadata, which it needs), set to Node's WebCrypto: loaded when a
 * key or certificate is first made or read, not with this module, which every local command imports.
 */
function loadX509(): Promise<typeof X509> {
  x509Loaded ??= (async () => {
    await import('reflect-metadata');
    const x509 = await import('@peculiar/x509');
    x509.cryptoProvider.set(webcrypto as never);
    return x509;
  })();
  return x509Loaded;
}

function serial(): string {
  const bytes = randomBytes(16);
  bytes[0]! &= 0x7f; // positive, as RFC 5280 requires
  return bytes.toString('hex');
}

async function exportKey(key: webcrypto.CryptoKey): Promise<string> {
  const x509 = await loadX509();
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

/**
 * The reused CA's key, read with Node's own crypto (reusing a CA never loads @peculiar/x509);
 * throws, naming both files and the fix, unless it is a P-256 key and the key of ca.crt.
 */
async function reusedCaKey(
  files: { ca: string; caKey: string },
  caPem: string,
  keyPem: string,
): Promise<webcrypto.CryptoKey> {
  let problem: string;
  try {
    const key = createPrivateKey(keyPem);
    const curve = key.asymmetricKeyDetails?.namedCurve;
    if (key.asymmetricKeyType !== 'ec' || curve !== 'prime256v1')
      problem = `it is a${curve ? ` ${curve}` : 'n'} ${key.asymmetricKeyType} key, not an ECDSA P-256 one`;
    else if (!new X509Certificate(caPem).checkPrivateKey(key)) problem = 'it is another ECDSA P-256 key';
    else {
      const der = key.export({ format: 'der', type: 'pkcs8' });
      return await webcrypto.subtle.importKey('pkcs8', der, ALGORITHM, true, ['sign']);
    }
  } catch (err) {
    problem = (err as Error).message;
  }
  throw new Error(
    `${files.caKey} is not the private key of ${files.ca} (${problem}): delete ${files.ca} and ${files.caKey} ` +
      'to make a new local CA, then apply the manifests klw writes again (their caBundle changes).',
  );
}

/**
 * Writes a key (or, with PUBLIC_MODE, a certificate) through the toolkit's one file writer:
 * atomically, mode 0600 unless told otherwise, a symbolic link at `file` refused.
 */
export function writePrivate(file: string, text: string, mode = PRIVATE_MODE): void {
  writeFileSafely(file, text, mode === PRIVATE_MODE ? { secret: true } : { mode });
}

/**
 * Reads a private key without following a symbolic link; a key readable by group or
 * others is narrowed to 0600 (and `onLoose` told), one owned by another user refused.
 */
export function readPrivate(file: string, onLoose: (message: string) => void = () => {}): string {
  const hint = 'Anyone who read it could impersonate the emulator: delete the state dir to make a new CA.';
  return readPrivateFile(file, (message) => onLoose(`${message} ${hint}`));
}

/** True when a PEM server certificate is signed by the CA and is not near expiry. */
function serverCertUsable(certPem: string, caPem: string): boolean {
  try {
    const cert = new X509Certificate(certPem);
    const ca = new X509Certificate(caPem);
    if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) return false;
    return new Date(cert.validTo).getTime() - Date.now() >= RENEW_BEFORE_DAYS * DAY;
  } catch {
    return false;
  }
}

/**
 * Creates, once, a local CA and a server certificate for localhost, 127.0.0.1, ::1 and
 * `names` in `stateDir`, and reuses them afterwards; the server certificate alone is
 * re-issued from the same CA when it is near expiry or the names change, so the caBundle
 * clusters already trust stays valid.
 */
export async function ensureLocalCertificates(
  stateDir: string,
  warn: (message: string) => void = (m) => process.stderr.write(`klw: ${m}\n`),
  names: ServerNames = serverNames(),
): Promise<LocalCertificates> {
  makeDir(stateDir, { secret: true });
  const files = {
    ca: join(stateDir, 'ca.crt'),
    caKey: join(stateDir, 'ca.key'),
    cert: join(stateDir, 'server.crt'),
    key: join(stateDir, 'server.key'),
    names: join(stateDir, 'server.names'),
  };
  const wanted = namesKey(names);
  const { caPem, caKey, created } = await localCa(files, warn);

  const sameNames = existsSync(files.names) && readRegularFile(files.names) === wanted;
  if (
    !created &&
    sameNames &&
    existsSync(files.cert) &&
    existsSync(files.key) &&
    serverCertUsable(readRegularFile(files.cert), caPem)
  ) {
    return {
      caPem,
      certPem: readRegularFile(files.cert),
      keyPem: readPrivate(files.key, warn),
      caPath: files.ca,
      created,
    };
  }

  const { certPem, keyPem } = await issueServerCertificate(caPem, caKey, names);
  writePrivate(files.key, keyPem);
  writePrivate(files.cert, certPem, PUBLIC_MODE);
  writePrivate(files.names, wanted, PUBLIC_MODE);
  return { caPem, certPem, keyPem, caPath: files.ca, created: true };
}

/** The local CA's certificate and key: read from the state dir, else created there (`created`). */
async function localCa(
  files: { ca: string; caKey: string },
  warn: (message: string) => void,
): Promise<{ caPem: string; caKey: webcrypto.CryptoKey; created: boolean }> {
  let created = false;
  let caPem: string;
  let caKey: webcrypto.CryptoKey;
  if (existsSync(files.ca) && existsSync(files.caKey)) {
    caPem = readRegularFile(files.ca);
    caKey = await reusedCaKey(files, caPem, readPrivate(files.caKey, warn));
  } else {
    const x509 = await loadX509();
    const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
    const now = Date.now();
    const ca = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: serial(),
      name: 'CN=kube-lambda-webhooks local CA',
      notBefore: new Date(now - DAY),
      notAfter: new Date(now + CA_DAYS * DAY),
      keys: keys as never,
      signingAlgorithm: ALGORITHM,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    caPem = `${ca.toString('pem')}\n`;
    caKey = keys.privateKey;
    writePrivate(files.caKey, await exportKey(keys.privateKey));
    writePrivate(files.ca, caPem, PUBLIC_MODE);
    created = true;
  }
  return { caPem, caKey, created };
}

/** A new server certificate and key for `names`, signed by the local CA. */
async function issueServerCertificate(
  caPem: string,
  caKey: webcrypto.CryptoKey,
  names: ServerNames,
): Promise<{ certPem: string; keyPem: string }> {
  const x509 = await loadX509();
  const ca = new x509.X509Certificate(caPem);
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: 'CN=localhost',
    issuer: ca.subject,
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + SERVER_DAYS * DAY),
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...names.dns.map((value) => ({ type: 'dns' as const, value })),
        ...names.ip.map((value) => ({ type: 'ip' as const, value })),
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(ca),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const certPem = `${cert.toString('pem')}\n`;
  const keyPem = await exportKey(keys.privateKey);
  return { certPem, keyPem };
}
