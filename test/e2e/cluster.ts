import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect, createServer } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Where infra/e2e/build-apiserver.sh puts kube-apiserver. */
export const APISERVER =
  process.env.KLW_KUBE_APISERVER ??
  join(process.env.KLW_CACHE_DIR ?? join(homedir(), '.cache', 'kube-lambda-webhooks'), 'bin', 'kube-apiserver');

/** An HTTP answer from the API server. */
export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  text: string;
}

const children = new Set<ChildProcess>();
/** What each child printed so far (stdout and stderr). */
const outputs = new WeakMap<ChildProcess, Buffer[]>();
/** Attempts at starting etcd or kube-apiserver on fresh ports when a port was taken meanwhile. */
const PORT_ATTEMPTS = 4;
const PORT_TAKEN = /address already in use/i;

/** What a child printed so far. */
function outputOf(child: ChildProcess): string {
  return Buffer.concat(outputs.get(child) ?? []).toString('utf8');
}

/** True once the child has exited. */
const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** True when something accepts TCP connections on 127.0.0.1:port. */
function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
// However the run ends, no etcd or kube-apiserver is left behind.
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** A free TCP port on an address of this host (127.0.0.1 by default). */
export async function freePort(address = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, address, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function start(command: string, args: string[], logFile: string, netns?: string): ChildProcess {
  // `ip netns exec` execs the command itself, so the child's pid is etcd's or kube-apiserver's.
  const child = netns
    ? spawn('ip', ['netns', 'exec', netns, command, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks: Buffer[] = [];
  outputs.set(child, chunks);
  child.stdout!.on('data', (c: Buffer) => chunks.push(c));
  child.stderr!.on('data', (c: Buffer) => chunks.push(c));
  child.on('exit', () => {
    children.delete(child);
    writeFileSync(logFile, Buffer.concat(chunks));
  });
  children.add(child);
  return child;
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

/** Where the cluster runs: by default on this host's loopback; else inside a network namespace, serving on an address of it. */
export interface ClusterPlace {
  /** The network namespace etcd and kube-apiserver run in. */
  netns: string;
  /** The namespace's own address kube-apiserver binds to (reachable from this host). */
  address: string;
}

// Inside a fresh network namespace every port is free.
const NETNS_PORTS = { etcdClient: 2379, etcdPeer: 2380, apiserver: 6443 };

/** A kube-apiserver backed by its own etcd, on loopback ports (or in a network namespace), with token authentication. */
export class Cluster {
  readonly token = randomBytes(16).toString('hex');
  url = '';
  kubeconfig = '';
  private etcd?: ChildProcess;
  private apiserver?: ChildProcess;
  private etcdUrl = '';
  private ca = '';

  constructor(
    readonly dir: string,
    readonly place?: ClusterPlace,
  ) {}

  /** The pids of etcd and kube-apiserver while they run. */
  get pids(): number[] {
    return [this.etcd, this.apiserver]
      .filter((c) => c && c.exitCode === null && c.signalCode === null)
      .map((c) => c!.pid!);
  }

  /**
   * Starts etcd once, serving. A port another process took between freePort and etcd's bind
   * (parallel runs) makes etcd exit: it is started again on fresh ports.
   */
  async startEtcd(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const [client, peer] = this.place
        ? [NETNS_PORTS.etcdClient, NETNS_PORTS.etcdPeer]
        : [await freePort(), await freePort()];
      this.etcdUrl = `http://127.0.0.1:${client}`;
      const etcd = start(
        'etcd',
        [
          '--data-dir',
          join(this.dir, 'etcd'),
          '--listen-client-urls',
          this.etcdUrl,
          '--advertise-client-urls',
          this.etcdUrl,
          '--listen-peer-urls',
          `http://127.0.0.1:${peer}`,
          '--initial-advertise-peer-urls',
          `http://127.0.0.1:${peer}`,
          '--initial-cluster',
          `default=http://127.0.0.1:${peer}`,
        ],
        join(this.dir, 'etcd.log'),
        this.place?.netns,
      );
      this.etcd = etcd;
      // In a network namespace the port is not reachable from here: kube-apiserver waits for it.
      if (this.place) return;
      for (let i = 0; i < 120 && !exited(etcd); i++) {
        if (await accepting(client)) return;
        await sleep(250);
      }
      await stop(etcd);
      if (attempt >= PORT_ATTEMPTS || !PORT_TAKEN.test(outputOf(etcd)))
        throw new Error(`etcd did not start: see ${join(this.dir, 'etcd.log')}`);
    }
  }

  /**
   * Starts (or restarts) kube-apiserver, optionally with an admission control config file and
   * more flags. A port taken meanwhile makes it exit: it is started again on a fresh port.
   */
  async startApiServer(admissionConfigFile?: string, extraArgs: string[] = []): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      await stop(this.apiserver);
      const started = await this.startApiServerOnce(admissionConfigFile, extraArgs);
      if (started) return;
      if (attempt >= PORT_ATTEMPTS || !PORT_TAKEN.test(outputOf(this.apiserver!)))
        throw new Error(`kube-apiserver exited: see ${join(this.dir, 'apiserver.log')}`);
    }
  }

  /** One start of kube-apiserver; false when it exited before serving. */
  private async startApiServerOnce(admissionConfigFile: string | undefined, extraArgs: string[]): Promise<boolean> {
    if (!existsSync(APISERVER))
      throw new Error(`${APISERVER} not found: run infra/e2e/build-apiserver.sh (it builds it once into the cache)`);
    mkdirSync(this.dir, { recursive: true });
    const saKey = join(this.dir, 'sa.key');
    const saPub = join(this.dir, 'sa.pub');
    if (!existsSync(saKey)) {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      writeFileSync(saKey, privateKey.export({ type: 'pkcs8', format: 'pem' }));
      writeFileSync(saPub, publicKey.export({ type: 'spki', format: 'pem' }));
    }
    writeFileSync(join(this.dir, 'tokens.csv'), `${this.token},admin,admin-uid,system:masters\n`);
    const port = this.place ? NETNS_PORTS.apiserver : await freePort();
    const address = this.place?.address ?? '127.0.0.1';
    this.url = `https://${address}:${port}`;
    this.apiserver = start(
      APISERVER,
      [
        `--etcd-servers=${this.etcdUrl}`,
        `--bind-address=${address}`,
        `--advertise-address=${address}`,
        `--secure-port=${port}`,
        `--cert-dir=${join(this.dir, 'certs')}`,
        `--token-auth-file=${join(this.dir, 'tokens.csv')}`,
        '--authorization-mode=RBAC',
        '--allow-privileged=true',
        // No controller manager runs, so nothing would create service accounts.
        '--disable-admission-plugins=ServiceAccount',
        '--service-account-issuer=https://kubernetes.default.svc',
        `--service-account-key-file=${saPub}`,
        `--service-account-signing-key-file=${saKey}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        ...(admissionConfigFile ? [`--admission-control-config-file=${admissionConfigFile}`] : []),
        ...extraArgs,
      ],
      join(this.dir, 'apiserver.log'),
      this.place?.netns,
    );
    const caFile = join(this.dir, 'certs', 'apiserver.crt');
    const apiserver = this.apiserver;
    for (let i = 0; i < 120; i++) {
      if (exited(apiserver)) return false;
      if (existsSync(caFile)) {
        this.ca = readFileSync(caFile, 'utf8');
        const ready = await this.api('GET', '/readyz').catch(() => undefined);
        if (ready?.status === 200) break;
      }
      await sleep(500);
    }
    this.kubeconfig = join(this.dir, 'kubeconfig');
    writeFileSync(
      this.kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'e2e', cluster: { server: this.url, 'certificate-authority': caFile } }],
        users: [{ name: 'admin', user: { token: this.token } }],
        contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: 'admin', namespace: 'default' } }],
        'current-context': 'e2e',
      }),
    );
    // The default namespace is created by the API server's bootstrap controller shortly after start.
    for (let i = 0; i < 60 && (await this.api('GET', '/api/v1/namespaces/default')).status !== 200; i++)
      await sleep(250);
    return true;
  }

  /** One request to the API server, verified against its certificate. */
  api(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<ApiResponse> {
    return new Promise((resolve, reject) => {
      const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
      const req = request(
        `${this.url}${path}`,
        {
          method,
          ca: this.ca,
          headers: {
            authorization: `Bearer ${this.token}`,
            accept: 'application/json',
            ...(text ? { 'content-type': contentType } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const raw = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = raw;
            try {
              parsed = JSON.parse(raw);
            } catch {
              // not JSON: keep the text
            }
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed, text: raw });
          });
        },
      );
      req.on('error', reject);
      req.end(text);
    });
  }

  /** Runs kubectl against this cluster. */
  kubectl(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      execFile('kubectl', ['--kubeconfig', this.kubeconfig, ...args], { encoding: 'utf8' }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  }

  /** Stops kube-apiserver and etcd. */
  async stop(): Promise<void> {
    await stop(this.apiserver);
    await stop(this.etcd);
  }
}
