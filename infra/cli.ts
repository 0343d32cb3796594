import { existsSync, readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { buildAll, formatBytes } from './build.ts';
import { KlwError, loadFunctions, ownHandlerFindings } from './functions.ts';
import { formatFinding, lintDocuments, lintFiles, lintRegistrations, PLACEHOLDER_RULE, type Finding } from './lint.ts';
import { lintRulesForVersion, shippedCrds } from './lint/rules.ts';
import { PATH_SECRET_PLACEHOLDER } from './secrets.ts';
import { FLEET_FILE } from './fleet/file.ts';
import { fleetManifests, type FleetManifestOptions } from './fleet/commands.ts';
import {
  DEFAULT_CONFIGURATION_NAME,
  generateManifests,
  unknownCrds,
  type Endpoints,
  type ManifestSet,
} from './manifests.ts';
import { readDocuments, renderDocuments, writeOutput } from './output.ts';
import { scaffold } from './scaffold.ts';
import { EXAMPLE_FUNCTIONS, initProject, packageHint } from './init.ts';
import { runTests } from './test-runner.ts';
import { packageInfo } from './version.ts';
import { enforcedWebhooks, forKubeVersion, kubeTargetFrom, lintInFunctionConditions } from './kube-versions.ts';
import { withKubeVersion } from './kube-versions.ts';
import { addLocalCommands } from './local/commands.ts';
import { applyNodeOption, NODE_OPTION_HELP, RanElsewhere } from './node-binary.ts';
import { writeAuthConfig } from './auth-config.ts';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { awsClients, deployedEndpoints, updateChangedCode } from './deploy.ts';
import { checkServerless, lambdaName, readServerless, runServerless } from './serverless.ts';
import { smoke } from './smoke.ts';
import { addLogsCommand } from './logs.ts';
import {
  addSecretCommands,
  DEFAULT_STATE_DIR,
  ensureTargetPathSecret,
  REGION_HELP,
  regionFor,
  smokePathSecret,
  withPathSecret,
  writePrivateOutput,
  type PathSecretOptions,
} from './secret-commands.ts';
import {
  DEFAULT_PAGE_SIZE,
  deniedLine,
  ProgressBar,
  renderAudit,
  runAudit,
  summaryLine,
  type AuditReport,
} from './audit.ts';
import { KubeClient, kubeLimitsFrom, loadConnection, whoAmI, type LimitOptions } from './kubeapi.ts';
import type { AdmissionWebhook } from '../lib/admission/webhook.ts';

/** Exit code of `klw audit` when the audit did not run or could not check everything (1 means something would be denied). */
export const AUDIT_INCOMPLETE = 2;

/** Progress and findings go to stderr, so stdout carries only the requested output. */
function say(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Prints lint findings; throws when any is an error. */
export function reportFindings(findings: Finding[]): void {
  for (const f of findings) say(formatFinding(f));
  const errors = findings.filter((f) => f.level === 'error').length;
  if (errors) throw new KlwError(`${errors} lint error${errors > 1 ? 's' : ''}; fix them before registering`);
}

/** Reads the endpoint options shared by manifests, start-api and deploy. */
export function endpointsFrom(options: { baseUrl?: string; functionUrls?: string; caBundle?: string }): Endpoints {
  const endpoints: Endpoints = {};
  if (options.baseUrl) endpoints.baseUrl = options.baseUrl;
  if (options.functionUrls) {
    const text = readFileSync(options.functionUrls, 'utf8');
    try {
      endpoints.functionUrls = JSON.parse(text) as Record<string, string>;
    } catch {
      throw new KlwError(`${options.functionUrls} is not JSON ({ "function-name": "https://..." })`);
    }
  }
  if (options.caBundle) {
    const pem = readFileSync(options.caBundle, 'utf8');
    if (!pem.includes('-----BEGIN CERTIFICATE-----'))
      throw new KlwError(`${options.caBundle} holds no PEM certificate`);
    endpoints.caBundlePem = pem;
  }
  return endpoints;
}

/** Generates manifests for every function and lints them; the shared core of manifests, start-api and deploy. */
export async function manifestsFor(
  root: string,
  endpoints: Endpoints,
  name = DEFAULT_CONFIGURATION_NAME,
  options: { crdPatches?: boolean } = {},
): Promise<ManifestSet> {
  const functions = await loadFunctions(root);
  if (!functions.length) throw new KlwError(`no functions under ${resolve(root, 'functions')}`);
  // With --crd-patches a CRD installed otherwise gets its patch; without, its conversion would be left out unsaid.
  const unknown = options.crdPatches ? [] : unknownCrds(functions.map((f) => f.registration));
  if (unknown.length) throw new KlwError(unknown.map((u) => u.message).join('\n'));
  const set = generateManifests(
    root,
    functions.map((f) => f.registration),
    endpoints,
    name,
  );
  // The placeholder is there when asked for (klw manifests says so): the API server refuses it, as meant.
  reportFindings(lintDocuments(set.documents).filter((f) => f.rule !== PLACEHOLDER_RULE));
  return set;
}

/** The minor of a target Kubernetes version (a 2.x would serve what the newest 1.x does). */
function kubeMinor(target: { version: { major: number; minor: number } }): number {
  return target.version.major > 1 ? Number.POSITIVE_INFINITY : target.version.minor;
}

/** The arguments klw was run with, for `--node` to run the same command again. */
let invokedArgv: string[] = process.argv;

/** What commands run outside this process, for tests to replace; each defaults to the real one. */
export interface CliDeps {
  /** Runs the Serverless Framework CLI (`klw deploy`). */
  runServerless?: typeof runServerless;
}

/** Builds the klw program. */
export function program(deps: CliDeps = {}): Command {
  const serverless = deps.runServerless ?? runServerless;
  const cli = new Command('klw')
    .description('Kubernetes admission and conversion webhooks as AWS Lambda functions')
    .option('--root <dir>', 'project folder (holds functions/)', process.cwd())
    .version(packageInfo().version, '-V, --version', 'print the version of kube-lambda-webhooks')
    .showHelpAfterError()
    .exitOverride();
  const root = () => resolve(cli.opts<{ root: string }>().root);
  // --node (local commands, test): the command runs again on that Node, installed when missing.
  cli.hook('preAction', async (_program, command) =>
    applyNodeOption(command.opts<{ node?: string }>().node, invokedArgv, root(), say),
  );

  cli
    .command('build')
    .description('bundle each function with esbuild into dist/functions/<name>/index.mjs and a deterministic zip')
    .argument('[functions...]', 'only these functions')
    .action(async (names: string[]) => {
      const functions = await loadFunctions(root(), names);
      say(`building ${functions.length} function${functions.length === 1 ? '' : 's'}`);
      await buildAll(root(), functions, (b) =>
        say(
          `  ${b.name.padEnd(28)} ${formatBytes(b.bundleBytes).padStart(9)} bundle  ${formatBytes(b.zipBytes).padStart(9)} zip  ${b.zip}`,
        ),
      );
    });

  cli
    .command('manifests')
    .description('write the webhook configurations and CRD conversion for the functions at their https URLs')
    .option('--base-url <url>', 'https://host[:port][/stage]; each function at <base>/<name>')
    .option('--function-urls <file>', 'JSON object of function name to URL (Lambda function URLs)')
    .option('--ca-bundle <file>', 'PEM of the CA that signed the endpoint certificate')
    .option('--out <file>', 'write here instead of stdout')
    .option('--crd-patches <dir>', 'also write <crd>.conversion-patch.yaml files for kubectl patch --type merge')
    .option('--name <name>', 'name of the webhook configurations', DEFAULT_CONFIGURATION_NAME)
    .addOption(
      new Option(
        '--path-secret <source>',
        'path secret in clientConfig.url: a placeholder to replace, the local one (--state-dir), the deployed one from SSM (--stage, --region), or none',
      )
        .choices(['placeholder', 'local', 'ssm', 'none'])
        .default('placeholder'),
    )
    .option('--state-dir <dir>', 'local state directory, for --path-secret local', DEFAULT_STATE_DIR)
    .option('--stage <stage>', 'Serverless stage, for --path-secret ssm', 'dev')
    .option('--region <region>', `${REGION_HELP}; for --path-secret ssm`)
    .addOption(new Option('--format <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .option(
      '--kube-version <X.Y>',
      'write only the fields this Kubernetes version knows (matchConditions need 1.28, or 1.27 with the feature gate)',
    )
    .option(
      '--feature-gates <gates>',
      'feature gates on in the target API server, as kube-apiserver takes them (AdmissionWebhookMatchConditions=true)',
    )
    .option('--cluster <name>', `a cluster of ${FLEET_FILE}: its secret, Kubernetes version and enforcement`)
    .option('--all-clusters', `every cluster of ${FLEET_FILE}, one file each in --out-dir`)
    .option('--out-dir <dir>', 'with --all-clusters: where <cluster>.yaml (or .json) go')
    .action(
      async (
        options: {
          baseUrl?: string;
          functionUrls?: string;
          caBundle?: string;
          out?: string;
          crdPatches?: string;
          name: string;
          format: 'yaml' | 'json';
          kubeVersion?: string;
          featureGates?: string;
          pathSecret: PathSecretOptions['pathSecret'];
          stateDir: string;
          stage: string;
          region?: string;
        } & FleetManifestOptions,
      ) => {
        if (!options.baseUrl === !options.functionUrls)
          throw new KlwError('give exactly one of --base-url or --function-urls');
        const target = kubeTargetFrom(options);
        // Only the deployed secret needs serverless.yml: its service, and its region without --region.
        const config = options.pathSecret === 'ssm' ? readServerless(root()) : undefined;
        const secretOptions: PathSecretOptions = {
          pathSecret: options.pathSecret,
          stateDir: options.stateDir,
          stage: options.stage,
          region: regionFor(options, () => config),
          ...(config ? { service: String(config.service) } : {}),
        };
        const fleetDeps = {
          endpoints: endpointsFrom(options),
          report: reportFindings,
          say,
          build: (e: Endpoints) => manifestsFor(root(), e, options.name),
        };
        if (await fleetManifests(root(), options, target, secretOptions, fleetDeps)) return;
        const set = await manifestsFor(
          root(),
          await withPathSecret(endpointsFrom(options), undefined, secretOptions),
          options.name,
          { crdPatches: !!options.crdPatches },
        );
        const written = [set.documents, options.crdPatches ? set.crdPatches : []];
        if (secretOptions.pathSecret === 'placeholder' && JSON.stringify(written).includes(PATH_SECRET_PLACEHOLDER)) {
          say(
            `clientConfig.url holds the placeholder ${PATH_SECRET_PLACEHOLDER}, which the API server refuses until it ` +
              'is replaced by the secret; --path-secret ssm --stage <stage> (deployed) or --path-secret local (emulator) ' +
              'writes the secret',
          );
        }
        if (target) {
          const versioned = forKubeVersion(
            set.documents,
            target,
            enforcedWebhooks((await loadFunctions(root())).map((f) => f.registration)),
          );
          // The conditions as that version's API server compiles a configuration being created.
          const conditions = lintDocuments(versioned.documents, target.version).filter((f) =>
            f.rule.startsWith('match-conditions'),
          );
          reportFindings([
            ...versioned.findings,
            ...conditions,
            ...lintRulesForVersion(set.documents, kubeMinor(target)),
          ]);
          set.documents = versioned.documents;
        }
        // With the local or deployed secret the URLs hold it: the files are readable by their owner only.
        const secret = secretOptions.pathSecret === 'local' || secretOptions.pathSecret === 'ssm';
        writeOutput(renderDocuments(set.documents, options.format), options.out, { secret });
        for (const patch of options.crdPatches ? set.crdPatches : []) {
          const file = resolve(options.crdPatches!, `${patch.crd}.conversion-patch.yaml`);
          writeOutput(renderDocuments([patch.patch], 'yaml'), file, { secret });
          say(`wrote ${file}`);
        }
        if (options.out) say(`wrote ${options.out} (${set.documents.length} objects)`);
      },
    );

  cli
    .command('lint')
    .description(
      "check manifests (or, without files, the functions' registrations) against the API server's rules and the good practices",
    )
    .argument('[files...]', 'YAML or JSON manifests')
    .option(
      '--kube-version <X.Y>',
      "check CEL and say what this Kubernetes version's API server would refuse or drop (default: the newest)",
    )
    .option('--feature-gates <gates>', 'feature gates on in that API server (AdmissionWebhookMatchConditions=true)')
    .action(async (files: string[], options: { kubeVersion?: string; featureGates?: string }) => {
      const target = kubeTargetFrom(options);
      const functions = files.length ? [] : await loadFunctions(root());
      const registrations = functions.map((f) => f.registration);
      const generated = files.length
        ? []
        : generateManifests(root(), registrations, { baseUrl: 'https://webhooks.example.com' }).documents;
      // The project's other CRDs, as what its rules may name (their own conversion is not linted here).
      if (!files.length) generated.push(...shippedCrds(root(), generated));
      const findings = files.length
        ? lintFiles(files, target?.version)
        : [
            ...lintRegistrations(registrations),
            ...lintDocuments(generated, target?.version),
            ...lintInFunctionConditions(registrations),
          ];
      if (target && !findings.some((f) => f.level === 'error')) {
        const documents = files.length ? files.flatMap((f) => readDocuments(f)) : generated;
        findings.push(...forKubeVersion(documents, target, enforcedWebhooks(registrations)).findings);
        findings.push(...lintRulesForVersion(documents, kubeMinor(target)));
      }
      if (!files.length && existsSync(resolve(root(), 'serverless.yml'))) {
        findings.push(
          ...checkServerless(
            readServerless(root()),
            (await loadFunctions(root())).map((f) => f.registration),
          ),
        );
      }
      findings.push(...ownHandlerFindings(root(), functions));
      // A finding about a function's webhook names the file to fix.
      for (const finding of findings) {
        const fn = functions.find((f) =>
          [f.registration.name, (f.registration as { webhookName?: string }).webhookName].includes(finding.subject),
        );
        const file = fn && relative(root(), fn.entry).split('\\').join('/');
        if (file && !finding.message.includes(file)) finding.message += ` (${file})`;
      }
      reportFindings(findings);
      say(`lint: ${findings.length ? `${findings.length} warning${findings.length > 1 ? 's' : ''}` : 'no findings'}`);
    });

  cli
    .command('audit')
    .description(
      'run the existing objects of a cluster through the admission functions locally, as an update of each object onto itself; exit 1 when any would be denied, 2 when the audit is incomplete',
    )
    .argument('[functions...]', 'only these functions')
    .option(
      '--kubeconfig <file>',
      'kubeconfig (default: KUBECONFIG, ~/.kube/config, else the in-cluster service account)',
    )
    .option('--context <name>', 'kubeconfig context (default: the current context)')
    .addOption(new Option('-o, --output <format>', 'report format').choices(['table', 'json', 'yaml']).default('table'))
    .option('--page-size <n>', 'objects per list request', (v: string) => Number(v), DEFAULT_PAGE_SIZE)
    .option('--as <user>', 'user name the reviews carry (default: who the cluster says you are)')
    .option('--as-group <group...>', 'groups the reviews carry, with --as')
    .option('--allow-partial', 'exit by the denials found even when some resources could not be listed (else exit 2)')
    .option('--request-timeout <duration>', 'most time one API request may take, to the last byte (default 60s)')
    .option('--list-timeout <duration>', "most of the API server's time one resource's pages may take (default 15m)")
    .option('--max-pages <n>', 'most pages one resource may have (default 10000)')
    .option('--exec-timeout <duration>', 'most time an exec credential plugin may run, then killed (default 60s)')
    .option('--no-progress', 'no progress bar (there is none unless stderr is a terminal)')
    .option('--kube-version <X.Y>', 'evaluate matchConditions as this Kubernetes version does (default: the newest)')
    // Exit 1 means "would deny" only: a usage error is an audit that did not run.
    .exitOverride((err) => {
      throw err.exitCode === 0 ? err : new CommanderError(AUDIT_INCOMPLETE, err.code, err.message);
    })
    .action(
      async (
        names: string[],
        options: {
          kubeconfig?: string;
          context?: string;
          output: 'table' | 'json' | 'yaml';
          pageSize: number;
          as?: string;
          asGroup?: string[];
          allowPartial?: boolean;
          progress: boolean;
          kubeVersion?: string;
        } & LimitOptions,
      ) => {
        let report: AuditReport;
        try {
          if (!Number.isInteger(options.pageSize) || options.pageSize < 1)
            throw new KlwError('--page-size must be a whole number of at least 1');
          const limits = kubeLimitsFrom(options);
          const webhooks = withKubeVersion(
            (await loadFunctions(root(), names))
              .map((f) => f.webhook)
              .filter((w): w is AdmissionWebhook => w.registration.type !== 'conversion'),
            options.kubeVersion,
          );
          if (!webhooks.length) throw new KlwError('no admission functions to audit');
          const connection = await loadConnection({
            ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}),
            ...(options.context ? { context: options.context } : {}),
            execTimeoutMs: limits.execMs,
          });
          const client = new KubeClient(connection, limits);
          const auditor = options.as
            ? { username: options.as, groups: [...(options.asGroup ?? []), 'system:authenticated'] }
            : ((await whoAmI(client)) ?? { username: 'klw-audit', groups: ['system:authenticated'] });
          say(
            `auditing ${webhooks.length} function${webhooks.length === 1 ? '' : 's'} against ${client.connection.server} as ${auditor.username}`,
          );
          const bar = new ProgressBar(options.progress ? process.stderr : { isTTY: false, write: () => true });
          // authorizer checks in matchConditions: the connection's own user by SelfSubjectAccessReview, an auditor given with --as by SubjectAccessReview.
          const accessReviews = options.as ? 'subject' : 'self';
          report = await runAudit({
            client,
            webhooks,
            auditor,
            accessReviews,
            pageSize: options.pageSize,
            onProgress: (p) => bar.update(p),
          }).finally(() => bar.done());
        } catch (err) {
          // Whatever kept the audit from running (credentials, the API server, the functions) exits 2, never 1.
          throw new KlwError(err instanceof Error ? err.message : String(err), {
            exitCode: AUDIT_INCOMPLETE,
            cause: err,
          });
        }
        for (const problem of report.problems) say(`${options.allowPartial ? 'warning' : 'incomplete'}: ${problem}`);
        writeOutput(renderAudit(report, options.output));
        say(summaryLine(report));
        const denied = deniedLine(report);
        const problems = report.problems.length;
        if (problems && !options.allowPartial) {
          if (denied) say(`klw: ${denied}`);
          throw new KlwError(
            `audit incomplete: ${problems} problem${problems === 1 ? '' : 's'} above left objects unchecked; --allow-partial accepts a partial audit`,
            { exitCode: AUDIT_INCOMPLETE },
          );
        }
        if (denied) throw new KlwError(denied);
      },
    );

  cli
    .command('new')
    .description('scaffold a function with its registration and a passing test')
    .addArgument(
      new Command().createArgument('<type>', 'kind of webhook').choices(['validating', 'mutating', 'conversion']),
    )
    .argument('<name>', 'function name (a DNS-1123 label)')
    .option(
      '--resource <plural>',
      'the resource an admission function is on: pods, deployments.apps (default: the one its name says, pod-policy -> pods, else configmaps)',
    )
    .action((type: 'validating' | 'mutating' | 'conversion', name: string, options: { resource?: string }) => {
      for (const file of scaffold(
        root(),
        type,
        name,
        options.resource !== undefined ? { resource: options.resource } : {},
      ))
        say(`created ${file}`);
    });

  cli
    .command('init')
    .description('create a project: package.json, tsconfig.json, a first function and its test, serverless.yml')
    .argument('<dir>', 'folder to create (new or empty)')
    .addOption(
      new Option('--template <type>', 'kind of the first function')
        .choices(['validating', 'mutating', 'conversion'])
        .default('validating'),
    )
    .option(
      '--package <spec>',
      'how the project depends on kube-lambda-webhooks: a version range, or a tarball from npm pack (file:<path> or a path, from the current folder)',
    )
    .action((dir: string, options: { template: 'validating' | 'mutating' | 'conversion'; package?: string }) => {
      const files = initProject(resolve(root(), dir), {
        template: options.template,
        ...(options.package ? { packageSpec: options.package } : {}),
      });
      for (const file of files) say(`created ${dir}/${file}`);
      say(`first function: functions/${EXAMPLE_FUNCTIONS[options.template]}`);
      say(`next: cd ${dir} && npm install && npm start   (then npm test)`);
      const hint = options.package ? undefined : packageHint();
      if (hint) say(hint);
    });

  cli
    .command('test')
    .description(
      'run the tests under test/ and functions/ (*.test.ts, .mts, .js, .mjs) with node --test; TypeScript through tsx',
    )
    .argument('[files...]', 'only these test files, or the test files under these folders')
    .option('--exclude <dirs...>', 'leave these folders out (test/e2e, say)')
    .option('--concurrency <n>', 'test files run at once', (v: string) => Number.parseInt(v, 10))
    .option('--reporter <name>', 'node:test reporter', 'spec')
    .option('--name-pattern <regex>', 'only tests whose name matches')
    .option('--node <major>', NODE_OPTION_HELP)
    .action(
      async (
        files: string[],
        options: { exclude?: string[]; concurrency?: number; reporter: string; namePattern?: string },
      ) => {
        const code = await runTests(root(), {
          files,
          reporter: options.reporter,
          ...(options.exclude ? { exclude: options.exclude } : {}),
          ...(options.concurrency ? { concurrency: options.concurrency } : {}),
          ...(options.namePattern ? { namePattern: options.namePattern } : {}),
        });
        if (code !== 0) throw new KlwError(`tests failed (node --test exited with ${code})`);
      },
    );

  cli
    .command('auth-config')
    .description('write the API server AdmissionConfiguration and kubeconfig that send a bearer token to the webhooks')
    .requiredOption('--url <url>', 'a webhook URL (or the base URL); its host[:port] names the credentials')
    .option('--token <token>', 'the bearer token')
    .option('--token-file <file>', 'read the token from a file')
    .option('--out-dir <dir>', 'where to write admission-config.yaml and webhook-kubeconfig.yaml', '.klw/auth')
    .action((options: { url: string; token?: string; tokenFile?: string; outDir: string }) => {
      if (!options.token === !options.tokenFile) throw new KlwError('give exactly one of --token or --token-file');
      const token = options.token ?? readFileSync(options.tokenFile!, 'utf8');
      const files = writeAuthConfig(options.outDir, options.url, token);
      say(`wrote ${files.admissionConfig}`);
      say(`wrote ${files.kubeconfig}`);
      say(`start kube-apiserver with --admission-control-config-file=${files.admissionConfig}`);
      say('and give the functions the same token (KLW_BEARER_TOKEN, or the SSM parameter when deployed)');
    });

  cli
    .command('deploy')
    .description('deploy with the Serverless Framework, then write the manifests for the deployed URLs')
    .option('--stage <stage>', 'Serverless stage', 'dev')
    .option('--region <region>', REGION_HELP)
    .option('--function-urls', 'deploy Lambda function URLs and register those instead of the HTTP API')
    .option('--direct', 'only update the code of functions whose zip changed (UpdateFunctionCode), no CloudFormation')
    .option('--out <file>', 'where to write the manifests', 'dist/manifests.yaml')
    .option('--ca-bundle <file>', 'PEM CA bundle for the endpoints (public AWS endpoints need none)')
    .action(
      async (options: {
        stage: string;
        region?: string;
        functionUrls?: boolean;
        direct?: boolean;
        out: string;
        caBundle?: string;
      }) => {
        const functions = await loadFunctions(root());
        const registrations = functions.map((f) => f.registration);
        const config = readServerless(root());
        reportFindings(checkServerless(config, registrations));
        const target = {
          service: String(config.service),
          stage: options.stage,
          region: regionFor(options, () => config),
        };
        say(`building ${functions.length} functions`);
        await buildAll(root(), functions);
        const clients = awsClients(target.region);
        if (options.direct) {
          say(`updating changed code in ${target.service}-${target.stage} (${target.region})`);
          await updateChangedCode(root(), clients, target, registrations, (u) =>
            say(`  ${u.name.padEnd(28)} ${u.updated ? 'updated' : 'unchanged'}`),
          );
          return;
        }
        const secrets = await ensureTargetPathSecret(target, registrations);
        say(`serverless deploy --stage ${target.stage} --region ${target.region}`);
        const args = [
          'deploy',
          '--stage',
          target.stage,
          '--region',
          target.region,
          ...(options.functionUrls ? ['--param', 'functionUrls=true'] : []),
        ];
        const out = await serverless(root(), args);
        process.stderr.write(out.stdout + out.stderr);
        if (out.code !== 0) throw new KlwError(`serverless deploy failed (exit ${out.code})`);
        const endpoints = await deployedEndpoints(clients, target, registrations, options.functionUrls === true);
        if (secrets) endpoints.pathSecret = secrets.current;
        if (options.caBundle) endpoints.caBundlePem = endpointsFrom({ caBundle: options.caBundle }).caBundlePem!;
        const set = await manifestsFor(root(), endpoints);
        // The URLs hold the path secret: the file is written readable by its owner only.
        writePrivateOutput(resolve(root(), options.out), renderDocuments(set.documents, 'yaml'));
        say(`wrote ${options.out}; register with: kubectl apply -f ${options.out}`);
      },
    );

  addSecretCommands(cli, () => readServerless(root()), say);
  addLogsCommand(cli, () => readServerless(root()));

  cli
    .command('smoke')
    .description('invoke every function through the Lambda Invoke API with a sample review and check the answer')
    .option('--stage <stage>', 'Serverless stage', 'dev')
    .option('--region <region>', REGION_HELP)
    .option('--endpoint <url>', 'a Lambda endpoint, such as klw local start-lambda (http://127.0.0.1:3001)')
    .option('--state-dir <dir>', 'local state directory holding the path secret, with --endpoint', DEFAULT_STATE_DIR)
    .action(async (options: { stage: string; region?: string; endpoint?: string; stateDir: string }) => {
      const registrations = (await loadFunctions(root())).map((f) => f.registration);
      // The local emulator (--endpoint) needs no serverless.yml, and takes any region.
      const config = options.endpoint ? undefined : readServerless(root());
      const region = regionFor(options, () => config);
      const client = options.endpoint
        ? new LambdaClient({
            endpoint: options.endpoint,
            region,
            credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          })
        : new LambdaClient({ region });
      const service = config ? String(config.service) : '';
      const name = (fn: string) => (options.endpoint ? fn : lambdaName(service, options.stage, fn));
      const secret = await smokePathSecret({ ...options, region }, service);
      const results = await smoke(
        client,
        registrations,
        name,
        (r) => say(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name.padEnd(28)} ${r.detail} (${Math.round(r.durationMs)} ms)`),
        secret,
      );
      const failures = results.filter((r) => !r.ok).length;
      say(`smoke: ${results.length - failures} passed, ${failures} failed`);
      if (failures) throw new KlwError(`${failures} function${failures > 1 ? 's' : ''} failed the smoke test`);
    });

  addLocalCommands(cli, root, say);

  return cli;
}

/**
 * Runs klw with argv; returns the exit code: a KlwError's own, else 1. Failures print one line,
 * never a stack (KLW_DEBUG adds the stack, and that of the error it wraps).
 */
export async function main(argv: string[], deps: CliDeps = {}): Promise<number> {
  invokedArgv = argv;
  try {
    await program(deps).parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    if (err instanceof RanElsewhere) return err.exitCode;
    say(`klw: ${err instanceof Error ? err.message : String(err)}`);
    if (process.env.KLW_DEBUG && err instanceof Error) {
      say(err.stack ?? '');
      if (err.cause instanceof Error) say(`caused by: ${err.cause.stack ?? err.cause.message}`);
    }
    return err instanceof KlwError ? err.exitCode : 1;
  }
}
