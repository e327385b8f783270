// bench/duckdb_peer.mjs -- DuckDB as a second database peer of make bench:
// the same events, nodes and edges as the SQLite peer loads,
// from the same CSV files argusq wrote, and the same slices (a recursive
// CTE over edges by target).  DuckDB comes from the npm registry
// (@duckdb/node-api), installed by bench/run.py (bench_peers.py) into build/; nothing of
// it is needed to build or test argusq.
//
//   node duckdb_peer.mjs load DB EVENTS.csv NODES.csv EDGES.csv
//        creates DB (a new file) and loads the three tables; prints
//        {"load_s":...}
//   node duckdb_peer.mjs slices DB DEPTH START...
//        one slice back per start node, each timed inside the process;
//        prints {"seconds":[...], "sets":[[node ids]...]}
import { DuckDBInstance } from '@duckdb/node-api';

const [cmd, db, ...rest] = process.argv.slice(2);

async function open(path) {
  const instance = await DuckDBInstance.create(path);
  return instance.connect();
}

async function load(db, events, nodes, edges) {
  const c = await open(db);
  const t0 = process.hrtime.bigint();
  // explicit types for the columns the slices use, text for the rest
  const csv = (f) => `read_csv('${f}', header = true, quote = '"', escape = '"', all_varchar = true)`;
  await c.run(`CREATE TABLE nodes AS SELECT CAST(id AS BIGINT) AS id, * EXCLUDE (id) FROM ${csv(nodes)}`);
  await c.run(`CREATE TABLE edges AS SELECT CAST("from" AS BIGINT) AS from_node, CAST("to" AS BIGINT) AS to_node,
                 kind, CAST(from_event AS BIGINT) AS from_event, CAST(to_event AS BIGINT) AS to_event
               FROM ${csv(edges)}`);
  await c.run(`CREATE TABLE events AS SELECT CAST(id AS BIGINT) AS id, CAST(ts AS BIGINT) AS ts,
                 CAST(tid AS BIGINT) AS tid, * EXCLUDE (id, ts, tid) FROM ${csv(events)}`);
  await c.run('CHECKPOINT');
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(JSON.stringify({ load_s: s }));
}

async function slices(db, depth, starts) {
  const c = await open(db);
  const seconds = [], sets = [];
  for (const start of starts) {
    const sql = `WITH RECURSIVE s(n, d) AS (
        SELECT ${Number(start)}::BIGINT, 0
        UNION
        SELECT e.from_node, s.d + 1 FROM edges e JOIN s ON e.to_node = s.n
        WHERE s.d < ${Number(depth)} AND e.kind <> 'weak')
      SELECT n.id, min(s.d) AS depth FROM s JOIN nodes n ON n.id = s.n GROUP BY n.id ORDER BY depth, n.id`;
    const t0 = process.hrtime.bigint();
    const reader = await c.runAndReadAll(sql);
    const rows = reader.getRows();
    seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
    sets.push(rows.map((r) => Number(r[0])));
  }
  console.log(JSON.stringify({ seconds, sets }));
}

if (cmd === 'load') await load(db, rest[0], rest[1], rest[2]);
else if (cmd === 'slices') await slices(db, rest[0], rest.slice(1));
else {
  console.error('usage: duckdb_peer.mjs load DB EVENTS NODES EDGES | slices DB DEPTH START...');
  process.exit(2);
}
