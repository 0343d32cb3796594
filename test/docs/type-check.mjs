// The docs' type-check, run by docs.test.ts as `node type-check.mjs <tsconfig.json>`: the program tsc
// makes of the docs' scratch project (the same options, files and module resolution), with the
// errors a user would see of the docs' code: those of the project's own files (the examples), of
// its configuration and options, the global ones, and any file that does not parse. The package's
// sources are read for their types, not checked again for their own errors (`npx tsc --noEmit`
// checks them): tsc would spend most of its time checking the whole library, which a user never
// compiles. Prints, as `tsc --listFiles` does, the absolute path of every file the program read,
// then the errors in tsc's format; exits 1 on any, 0 otherwise.
import { createRequire } from 'node:module';

// Required, not imported: an import of this CommonJS package has Node scan its source for names.
const ts = createRequire(import.meta.url)('typescript');

const project = process.argv[2];
if (!project) {
  process.stderr.write('usage: node type-check.mjs <tsconfig.json>\n');
  process.exit(2);
}
/** Problems reading the configuration, reported as tsc reports them. */
const configProblems = [];
const config = ts.getParsedCommandLineOfConfigFile(
  project,
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => configProblems.push(d) },
);
const host = ts.createCompilerHost(config?.options ?? {});
// As tsc parses: JSDoc only where it can change an error (the API's default parses all of it).
host.jsDocParsingMode = ts.JSDocParsingMode.ParseForTypeErrors;
const diagnostics = [...configProblems];
if (config) {
  const program = ts.createProgram({
    rootNames: config.fileNames,
    options: config.options,
    host,
    configFileParsingDiagnostics: ts.getConfigFileParsingDiagnostics(config),
  });
  for (const file of program.getSourceFiles()) process.stdout.write(`${file.fileName}\n`);
  diagnostics.push(
    ...program.getConfigFileParsingDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program.getSyntacticDiagnostics(),
  );
  // The examples: the files the project itself includes, not those they import from the package.
  for (const name of config.fileNames) {
    const file = program.getSourceFile(name);
    if (file) diagnostics.push(...program.getSemanticDiagnostics(file));
  }
}
const errors = ts.sortAndDeduplicateDiagnostics(diagnostics);
if (errors.length) process.stdout.write(ts.formatDiagnostics(errors, host));
process.exitCode = errors.length ? 1 : 0;
