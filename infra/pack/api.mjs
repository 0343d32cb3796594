#!/usr/bin/env node
// The public API report: `npm run api:check` fails when what the package's entry points export
// differs from the reports in etc/ (one per entry point of package.json "exports" that has types);
// `npm run api:update` rewrites them. Runs API Extractor (api-extractor.json) on the declarations
// `npm pack` ships, built first into pkg/ by build.mjs (`--no-build` reuses a pkg/ already built).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = fileURLToPath(new URL('../../', import.meta.url));
const update = process.argv.includes('--update');
const configFile = join(root, 'api-extractor.json');

/**
 * The packages reported: the toolkit (reports in etc/) and each workspace package of packages/
 * (reports in its own etc/), whose declarations build.mjs compiles into pkg/packages/<folder>/.
 */
function packages() {
  const toolkit = { dir: root, reports: join(root, 'etc'), declarations: (types) => join(root, types) };
  const workspaces = readdirSync(join(root, 'packages'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, 'packages', d.name, 'package.json')))
    .map((d) => {
      const dir = join(root, 'packages', d.name);
      return {
        dir,
        folder: d.name,
        reports: join(dir, 'etc'),
        declarations: (types) => join(root, 'pkg', 'packages', d.name, types.replace(/\.ts$/, '.d.ts')),
      };
    });
  return [toolkit, ...workspaces];
}

/** The entry points with types, as [subpath, declaration file, report name]: `./testing` gives `<name>-testing`. */
function entryPoints(pkg, unit) {
  const name = unit.folder ?? pkg.name;
  return Object.entries(pkg.exports ?? {}).flatMap(([subpath, target]) => {
    if (typeof target !== 'object' || typeof target.types !== 'string') return [];
    const suffix = subpath === '.' ? '' : `-${subpath.replace(/^\.\//, '').replaceAll('/', '-')}`;
    return [{ subpath, types: unit.declarations(target.types), report: `${name}${suffix}` }];
  });
}

if (!process.argv.includes('--no-build'))
  execFileSync(process.execPath, [join(root, 'infra', 'pack', 'build.mjs')], { stdio: 'inherit', cwd: root });
const base = ExtractorConfig.loadFile(configFile);
const problems = [];
for (const unit of packages()) check(unit);
if (problems.length) {
  process.stderr.write(`${problems.join('\n')}\n`);
  process.stderr.write('If the change is intended, run `npm run api:update` and commit the reports in etc/.\n');
  process.exit(1);
}

/** Compares (or with --update rewrites) the reports of one package's entry points. */
function check(unit) {
  const packageJson = join(unit.dir, 'package.json');
  const pkg = JSON.parse(readFileSync(packageJson, 'utf8'));
  const entries = entryPoints(pkg, unit);
  const exported = new Map(entries.map((e) => [e.subpath, exportedNames(e.types)]));
  for (const entry of entries) {
    const configObject = {
      ...base,
      projectFolder: unit.dir,
      mainEntryPointFilePath: entry.types,
      apiReport: { ...base.apiReport, reportFolder: unit.reports, reportFileName: entry.report },
    };
    const config = ExtractorConfig.prepare({
      configObject,
      configObjectFullPath: configFile,
      packageJsonFullPath: packageJson,
    });
    const others = new Set(entries.filter((e) => e !== entry).flatMap((e) => [...exported.get(e.subpath)]));
    const result = Extractor.invoke(config, { localBuild: update, messageCallback: (m) => judge(m, others) });
    const [report] = config.reportConfigs.map((r) => join(config.reportFolder, r.fileName));
    // Warnings (a forgotten export) print but pass: API Extractor's own `succeeded` fails on them outside --local.
    if (result.errorCount > 0) problems.push(`${pkg.name} ${entry.subpath}: ${result.errorCount} error(s) above`);
    else if (result.apiReportChanged && !update) {
      const fresh = join(config.reportTempFolder, relative(config.reportFolder, report));
      problems.push(
        `${pkg.name} ${entry.subpath}: the public API differs from ${relative(root, report)} (now: ${relative(root, fresh)})`,
      );
    } else
      process.stdout.write(
        `${pkg.name} ${entry.subpath}: ${update && result.apiReportChanged ? 'report updated' : 'matches'} ${relative(root, report)}\n`,
      );
  }
  // A report whose entry point is gone would guard nothing.
  const expected = new Set(entries.map((e) => `${e.report}.api.md`));
  for (const name of existsSync(unit.reports) ? readdirSync(unit.reports) : []) {
    if (!name.endsWith('.api.md') || expected.has(name)) continue;
    if (update) rmSync(join(unit.reports, name));
    else
      problems.push(
        `${relative(root, join(unit.reports, name))}: no entry point of package.json "exports" has this report`,
      );
  }
}

/** The names an entry point's declaration file exports (`export { a, type B } from ...` lines). */
function exportedNames(file) {
  const text = readFileSync(file, 'utf8');
  const lists = [...text.matchAll(/export (?:type )?\{([^}]*)\}/g)].map((m) => m[1]);
  return new Set(
    lists.flatMap((list) =>
      list
        .split(',')
        .map((n) =>
          n
            .trim()
            .replace(/^type /, '')
            .split(' as ')
            .at(-1),
        )
        .filter(Boolean),
    ),
  );
}

/**
 * Adjusts API Extractor's messages: its progress lines are left out; a type another entry point
 * exports is not a forgotten export (the test kit's signatures use the main entry's types); a
 * missing doc comment is an error on a top-level declaration (column 1 of its declaration file)
 * and only the report's `// (undocumented)` mark on a member.
 */
function judge(message, others) {
  if (message.logLevel === 'info' || message.logLevel === 'verbose') message.handled = true;
  const symbol = /The symbol "([^"]+)"/.exec(message.text)?.[1];
  const crossEntry = message.messageId === 'ae-forgotten-export' && symbol !== undefined && others.has(symbol);
  const member = message.messageId === 'ae-undocumented' && message.sourceFileColumn !== 1;
  if (crossEntry || member) {
    message.logLevel = 'none';
    message.handled = true;
  }
}
