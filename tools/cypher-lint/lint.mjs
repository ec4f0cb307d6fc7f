#!/usr/bin/env node
// Offline Cypher lint for the Neo4j-bound query files.
//
// Runs Neo4j's own Cypher parser and semantic analysis (the front end shipped in
// @neo4j-cypher/language-support, compiled to JavaScript) over each file; no server.
//
// Usage:
//   node lint.mjs [options] FILE...
//   node lint.mjs [options] --repo DIR          lint the Neo4j-bound files of DIR
//   node lint.mjs --repo DIR --list             only print those files
//
// Neo4j-bound files of a repo: cypher/queries/*.cypher, except those with a same-named
// override in cypher/neo4j/, plus cypher/neo4j/*.cypher. (cypher/ladybug/ is LadybugDB
// syntax, which Neo4j's parser rejects, so it is never linted here.)
//
// Parameters: a file may declare its parameters in comment lines
//     // param: run STRING
//     // param: rows LIST<MAP>
// If a file declares at least one parameter, its declarations are authoritative: using
// an undeclared $name is an error, declaring an unused one is a warning. A file without
// declarations gets every $name it uses declared for it (unless --strict-params).
//
// Output: one line per diagnostic, `path:line:col: severity: message` (1-based), then
// `cypher lint: N files, M statements, K errors`. Exit 1 if any error, else 0; exit 2 on
// bad usage. Errors are the analyser's error-severity diagnostics plus any diagnostic
// about an undefined parameter or an unknown function/procedure.
//
// Options:
//   --repo DIR          select files as described above (may be combined with FILEs)
//   --list              print the selected files and exit 0
//   --strict-params     parameters must be declared with `// param:` lines
//   --schema FILE.json  extra DbSchema fields (labels, relationshipTypes, propertyKeys,
//                       graphSchema, ...); with labels AND relationshipTypes given, unknown
//                       labels/types are warned about; with propertyKeys, unknown properties
//   --plugin NAME       also accept functions/procedures NAME.* (e.g. apoc, gds) known to
//                       the package's bundled Neo4j registry
//   --cypher 5|25       default Cypher version (default 5, as for Neo4j 5)
//   --quiet             print only errors and the summary

import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const USAGE =
  'usage: node lint.mjs [--repo DIR] [--list] [--strict-params] [--schema FILE.json] ' +
  '[--plugin NAME]... [--cypher 5|25] [--quiet] [FILE...]';

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const opts = {
    files: [],
    repo: null,
    list: false,
    strictParams: false,
    schema: null,
    plugins: [],
    cypher: '5',
    quiet: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usageError(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--') {
      opts.files.push(...argv.slice(i + 1));
      break;
    } else if (a === '-h' || a === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (a === '--repo') opts.repo = next();
    else if (a === '--list') opts.list = true;
    else if (a === '--strict-params') opts.strictParams = true;
    else if (a === '--schema') opts.schema = next();
    else if (a === '--plugin') opts.plugins.push(next());
    else if (a === '--cypher') opts.cypher = next();
    else if (a === '--quiet') opts.quiet = true;
    else if (a.startsWith('-')) usageError(`unknown option ${a}`);
    else opts.files.push(a);
  }
  if (!['5', '25'].includes(opts.cypher)) usageError('--cypher must be 5 or 25');
  if (opts.list && !opts.repo) usageError('--list needs --repo DIR');
  if (!opts.repo && opts.files.length === 0) usageError('no files given');
  return opts;
}

function usageError(msg) {
  console.error(`lint.mjs: ${msg}\n${USAGE}`);
  process.exit(2);
}

// ---------------------------------------------------------------- file selection

function cypherFilesIn(dir) {
  let names;
  try {
    names = readdirSync(dir);
  } catch (e) {
    if (e.code === 'ENOENT' || e.code === 'ENOTDIR') return [];
    throw e;
  }
  return names
    .filter((n) => n.endsWith('.cypher') && statSync(path.join(dir, n)).isFile())
    .sort();
}

/** Files of `repo` that run on Neo4j, as paths joined onto `repo`. */
function neo4jFiles(repo) {
  const queriesDir = path.join(repo, 'cypher', 'queries');
  const neo4jDir = path.join(repo, 'cypher', 'neo4j');
  const overrides = cypherFilesIn(neo4jDir);
  const overridden = new Set(overrides);
  return [
    ...cypherFilesIn(queriesDir)
      .filter((n) => !overridden.has(n))
      .map((n) => path.join(queriesDir, n)),
    ...overrides.map((n) => path.join(neo4jDir, n)),
  ];
}

// ---------------------------------------------------------------- parameters

const PARAM_LINE = /^\s*\/\/\s*param\s*:\s*(.*?)\s*$/i;
const PARAM_DECL = /^(`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)(?:\s+(.+))?$/;
const KNOWN_TYPES = new Set([
  'ANY', 'BOOLEAN', 'BOOL', 'STRING', 'INTEGER', 'INT', 'FLOAT', 'NUMBER', 'MAP',
  'LIST', 'DATE', 'DATETIME', 'LOCAL DATETIME', 'LOCALDATETIME', 'TIME', 'LOCAL TIME',
  'LOCALTIME', 'ZONED DATETIME', 'ZONED TIME', 'DURATION', 'POINT', 'NODE',
  'RELATIONSHIP', 'PATH', 'NULL', 'BYTES',
]);

/** `// param: NAME [TYPE]` lines -> { params: Map(name -> {type, line}), problems: [] } */
function declaredParams(text) {
  const params = new Map();
  const problems = [];
  text.split(/\r?\n/).forEach((lineText, i) => {
    const m = PARAM_LINE.exec(lineText);
    if (!m) return;
    const col = lineText.indexOf('param') + 1;
    const d = PARAM_DECL.exec(m[1]);
    if (!d) {
      problems.push(diag(i + 1, col, 'error', `malformed parameter declaration "${m[1]}" (expected "// param: NAME TYPE")`));
      return;
    }
    const name = d[1].replace(/^`|`$/g, '');
    const type = (d[2] ?? '').trim();
    if (params.has(name)) {
      problems.push(diag(i + 1, col, 'warning', `parameter $${name} declared twice`));
    }
    if (type) {
      // Base type: LIST<...> -> LIST, "STRING NOT NULL" -> STRING, "A | B" -> each.
      for (const alt of type.split('|')) {
        const base = alt.trim().toUpperCase().replace(/<.*$/, '').replace(/\s+NOT\s+NULL$/, '').replace(/\s+/g, ' ').trim();
        if (!KNOWN_TYPES.has(base)) {
          problems.push(diag(i + 1, col, 'warning', `parameter $${name}: unknown type "${alt.trim()}"`));
        }
      }
    }
    params.set(name, { type, line: i + 1 });
  });
  return { params, problems };
}

// ---------------------------------------------------------------- statements

/** Strip // and /* *\/ comments, respecting '...', "..." and `...` quoting. */
function stripComments(s) {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === "'" || c === '"' || c === '`') {
      let j = i + 1;
      while (j < s.length && s[j] !== c) j += s[j] === '\\' && c !== '`' ? 2 : 1;
      out += s.slice(i, j + 1);
      i = j + 1;
    } else if (c === '/' && s[i + 1] === '/') {
      while (i < s.length && s[i] !== '\n') i++;
    } else if (c === '/' && s[i + 1] === '*') {
      const end = s.indexOf('*/', i + 2);
      i = end < 0 ? s.length : end + 2;
      out += ' ';
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

// ---------------------------------------------------------------- diagnostics

function diag(line, col, severity, message) {
  return { line, col, severity, message };
}

const SEVERITY = { 1: 'error', 2: 'warning', 3: 'info', 4: 'hint' };

// Warnings that must fail the lint all the same.
const ALWAYS_ERROR = [
  /^Parameter \$.* is not defined/,
  /^Function .* is not present in the database/,
  /^Procedure .* is not present in the database/,
  /unknown (function|procedure)/i,
  /is a (procedure|function), not a (function|procedure)/,
];

// ---------------------------------------------------------------- main

async function main() {
  const opts = parseArgs(process.argv.slice(2));

  const files = [...(opts.repo ? neo4jFiles(opts.repo) : []), ...opts.files];
  if (opts.list) {
    for (const f of files) console.log(f);
    return 0;
  }

  if (files.length === 0) {
    console.log('cypher lint: 0 files, 0 statements, 0 errors');
    return 0;
  }

  let extraSchema = {};
  if (opts.schema) {
    try {
      extraSchema = JSON.parse(readFileSync(opts.schema, 'utf8'));
    } catch (e) {
      usageError(`cannot read --schema ${opts.schema}: ${e.message}`);
    }
  }

  // Loaded lazily: --list must work without node_modules.
  let lib;
  try {
    lib = await import('@neo4j-cypher/language-support');
  } catch (e) {
    console.error(
      `lint.mjs: cannot load @neo4j-cypher/language-support (${e.code ?? e.message}); ` +
        'run `npm ci --prefix tools/cypher-lint` first',
    );
    return 2;
  }
  const { lintCypherQuery, parseParameters, testData } = lib;

  // Function/procedure registry: the package's bundled snapshot of a Neo4j 5 DBMS
  // (testData.mockSchema), restricted to what ships with Neo4j itself. Without a
  // registry the analyser does not report unknown functions at all.
  const isCore = (name) => /^(db|dbms|tx)\./.test(name);
  const plugin = (name) => opts.plugins.some((p) => name.startsWith(p + '.'));
  const functions = {};
  const procedures = {};
  for (const [version, reg] of Object.entries(testData.mockSchema.functions)) {
    functions[version] = Object.fromEntries(
      Object.entries(reg).filter(([n, f]) => f.isBuiltIn || plugin(n)),
    );
  }
  for (const [version, reg] of Object.entries(testData.mockSchema.procedures)) {
    procedures[version] = Object.fromEntries(
      Object.entries(reg).filter(([n]) => isCore(n) || plugin(n)),
    );
  }
  const baseSchema = {
    functions,
    procedures,
    defaultLanguage: `CYPHER ${opts.cypher}`,
    ...extraSchema,
  };

  let nStatements = 0;
  let nErrors = 0;
  const out = [];

  for (const file of files) {
    let text;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      out.push([file, diag(1, 1, 'error', `cannot read file: ${e.code ?? e.message}`)]);
      nErrors++;
      continue;
    }

    const found = [];
    const { params: declared, problems } = declaredParams(text);
    found.push(...problems);

    // The library splits on top-level `;` itself (grammar-aware: not inside strings or
    // comments) and analyses each statement separately, reporting positions relative
    // to the whole file. A chunk holding only comments (e.g. after the last `;`) is not
    // a statement a loader would send, but the parser calls it an empty query: blank it.
    const chunks = lib.parseStatementsStrs(text);
    let pos = 0;
    for (const chunk of chunks) {
      const at = text.indexOf(chunk, pos);
      if (at < 0) continue;
      pos = at + chunk.length;
      if (stripComments(chunk).replace(/;\s*$/, '').trim().length > 0) {
        nStatements++;
      } else {
        text = text.slice(0, at) + chunk.replace(/[^\n]/g, ' ') + text.slice(pos);
      }
    }

    const used = parseParameters(text, false);
    const parameters = {};
    if (declared.size > 0 || opts.strictParams) {
      for (const [name, { type }] of declared) parameters[name] = type || 'ANY';
      for (const [name, { line }] of declared) {
        if (!used.includes(name)) {
          found.push(diag(line, 1, 'warning', `parameter $${name} is declared but not used`));
        }
      }
    } else {
      for (const name of used) parameters[name] = 'ANY';
    }

    const { diagnostics } = lintCypherQuery(
      text,
      { ...baseSchema, parameters: { ...(extraSchema.parameters ?? {}), ...parameters } },
      { consoleCommandsEnabled: false },
    );
    for (const d of diagnostics) {
      let severity = SEVERITY[d.severity] ?? 'warning';
      let message = d.message.replace(/\s*\n\s*/g, ' ').trim();
      if (ALWAYS_ERROR.some((re) => re.test(message))) severity = 'error';
      if (/^Parameter \$.* is not defined/.test(message)) {
        message += ' Declare it with a `// param: NAME TYPE` line.';
      }
      found.push(diag(d.range.start.line + 1, d.range.start.character + 1, severity, message));
    }

    found.sort((a, b) => a.line - b.line || a.col - b.col);
    for (const d of found) {
      if (d.severity === 'error') nErrors++;
      out.push([file, d]);
    }
  }

  for (const [file, d] of out) {
    if (opts.quiet && d.severity !== 'error') continue;
    console.log(`${file}:${d.line}:${d.col}: ${d.severity}: ${d.message}`);
  }
  console.log(
    `cypher lint: ${files.length} files, ${nStatements} statements, ${nErrors} errors`,
  );
  return nErrors > 0 ? 1 : 0;
}

process.exitCode = await main();
