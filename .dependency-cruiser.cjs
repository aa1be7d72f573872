/**
 * The layer rules of the folder map (README.md, "Folders"), checked by `npm run lint`.
 * Bottom to top: src/kernel; src/spec and the utilities in src/*.ts; src/config; connectors/;
 * src/store; src/pipeline; the domain (commission, reports, fraud, push, access); src/onboarding and
 * jobs/; the faces (src/cli, src/worker, src/api, src/console). A module imports only what is
 * below it; a face imports no other face (the CLI starts the others, in one module each); imports
 * never go round in a circle (types included).
 */
const FACES = '^src/(cli|worker|api|console)/';
/**
 * Where the CLI starts another face: the one HTTP app of `serve` (the API's server with the
 * console's routes) and the `worker` command. The only modules of a face that import another.
 */
const FACE_STARTERS = '^src/cli/(server|commands/worker)\\.ts$';
const DOMAIN = '^src/(commission|reports|fraud|push|access|privacy|onboarding|alerts)/';
const ABOVE_STORE = `${DOMAIN}|^src/(pipeline|worker|cli|api|console|sandbox)/|^jobs/|^connectors/`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Imports go one way: a circle (at run time or through types) means two modules are one concept, or one of them sits in the wrong layer.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'kernel-imports-nothing-of-ours',
      comment: 'src/kernel (money, dates, FX, timestamps, the clock) sits below every module.',
      severity: 'error',
      from: { path: '^src/kernel/' },
      to: { path: '^(src|connectors|jobs)/', pathNot: '^src/kernel/' },
    },
    {
      name: 'spec-and-config-below-the-store',
      comment: 'The spec and connector definitions know neither the store, nor the sources, nor what runs them.',
      severity: 'error',
      from: { path: '^src/(spec|config)/' },
      to: { path: `^src/store/|${ABOVE_STORE}` },
    },
    {
      name: 'connectors-know-no-store',
      comment: 'A source kind yields pages of raw records: it imports no store, pipeline, domain module, job or face.',
      severity: 'error',
      from: { path: '^connectors/' },
      to: { path: `^src/store/|${ABOVE_STORE}`, pathNot: '^connectors/' },
    },
    {
      name: 'store-imports-no-domain',
      comment: 'The store keeps rows: it imports no pipeline, domain module, job, source or face. Migrations carry their own code.',
      severity: 'error',
      from: { path: '^src/store/' },
      to: { path: ABOVE_STORE },
    },
    {
      name: 'migrations-are-frozen',
      comment: 'A migration imports only knex, its own folder, the dialect profile and src/kernel: a later change elsewhere must not change what it does on a store that has not run it yet.',
      severity: 'error',
      from: { path: '^src/store/migrations/' },
      to: { path: '^(src|connectors|jobs)/', pathNot: '^src/store/migrations/|^src/store/dialects\\.ts$|^src/kernel/' },
    },
    {
      name: 'pipeline-below-the-domain',
      comment: 'The load path knows the store, not the jobs that run after it (they are passed in as hooks).',
      severity: 'error',
      from: { path: '^src/pipeline/' },
      to: { path: `${DOMAIN}|^src/(worker|cli|api|console|sandbox)/|^jobs/|^connectors/` },
    },
    {
      name: 'domain-below-jobs-and-faces',
      comment: 'Commission, reports, fraud, push, access (API clients, console users) and privacy (erasure) are used by the compositions of a run (jobs/) and the faces, never the other way round.',
      severity: 'error',
      from: { path: '^src/(commission|reports|fraud|push|access|privacy|alerts)/' },
      to: { path: '^src/(onboarding|worker|cli|api|console|sandbox)/|^jobs/|^connectors/' },
    },
    {
      name: 'reports-read-the-ledger-only',
      comment: 'Reports depend on commission only for the ledger figures they show (its report query and ledger reads), not on the engine or the rules.',
      severity: 'error',
      from: { path: '^src/reports/' },
      to: { path: '^src/commission/', pathNot: '^src/commission/(report|ledger|plans|target)\\.ts$' },
    },
    {
      name: 'commission-knows-no-fraud-module',
      comment: 'The fraud job holds commissions (it calls into commission); commission reads the flags from the store, not from src/fraud.',
      severity: 'error',
      from: { path: '^src/commission/' },
      to: { path: '^src/fraud/' },
    },
    {
      name: 'jobs-import-no-face',
      comment: 'jobs/ composes a run and the after-load jobs for every face; it imports none of them.',
      severity: 'error',
      from: { path: '^(jobs|src/onboarding)/' },
      to: { path: '^src/(worker|cli|api|console)/' },
    },
    {
      name: 'no-module-imports-a-face',
      comment: 'Faces (CLI, worker, HTTP API, console) sit on top: nothing below imports them.',
      severity: 'error',
      from: { pathNot: FACES },
      to: { path: FACES },
    },
    {
      name: 'faces-import-no-face',
      comment: 'A face imports the layers below it, never another face: what two faces share (the stream locks and the exclusive run, the freshness rule, API clients and console users) sits below both. The CLI starts the worker and serves the API with the console, each from one module (FACE_STARTERS).',
      severity: 'error',
      from: { path: '^src/(cli|worker|api|console)/', pathNot: FACE_STARTERS },
      to: { path: FACES, pathNot: '^src/$1/' },
    },
    {
      name: 'api-and-console-import-no-cli',
      comment: 'The HTTP API and the console share the code below them with the CLI, not the CLI itself.',
      severity: 'error',
      from: { path: '^src/(api|console)/' },
      to: { path: '^src/cli/' },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
