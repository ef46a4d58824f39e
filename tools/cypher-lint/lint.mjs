// Lint Cypher statements with Neo4j's own linter (@neo4j-cypher/language-support, lintCypherQuery).
// stdin: {"schema": {labels, relationshipTypes, propertyKeys, procedures: [names]},
//         "statements": [{"name", "text", "parameters": {name: example}, "rowKeys": [...]}],
//         "versions": ["CYPHER 5", ...]}
// stdout: [{"name", "version", "severity", "message", "line", "column"}]  (empty list: all clean)
import { lintCypherQuery, testData } from '@neo4j-cypher/language-support';

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
const mock = testData.mockSchema;

// Real Neo4j procedure/function signatures ship with the linter; only the procedures we declare are
// allowed, so an APOC call or a typo in a procedure name is reported.
function pick(registry, names) {
  const out = {};
  for (const [version, byName] of Object.entries(registry)) {
    out[version] = {};
    for (const name of names) if (byName[name]) out[version][name] = byName[name];
  }
  return out;
}

const diagnostics = [];
const missing = [];
for (const version of request.versions) {
  for (const name of request.schema.procedures) {
    if (!mock.procedures[version]?.[name]) missing.push(`${version}: ${name}`);
  }
}
if (missing.length) {
  console.error(`procedures unknown to the linter's Neo4j signatures: ${missing.join(', ')}`);
  process.exit(2);
}

for (const version of request.versions) {
  for (const statement of request.statements) {
    const dbSchema = {
      labels: request.schema.labels,
      relationshipTypes: request.schema.relationshipTypes,
      // keys of the statement's own parameter maps (`UNWIND $rows AS row ... row.source_id`) count as known
      propertyKeys: [...request.schema.propertyKeys, ...(statement.rowKeys ?? [])],
      parameters: statement.parameters,
      procedures: pick(mock.procedures, request.schema.procedures),
      functions: mock.functions,
      defaultLanguage: version,
    };
    const { diagnostics: found } = lintCypherQuery(statement.text, dbSchema, { consoleCommandsEnabled: false });
    for (const d of found) {
      diagnostics.push({
        name: statement.name,
        version,
        severity: d.severity === 1 ? 'error' : d.severity === 2 ? 'warning' : 'info',
        message: d.message,
        line: d.range.start.line + 1,
        column: d.range.start.character + 1,
      });
    }
  }
}
process.stdout.write(JSON.stringify(diagnostics));
