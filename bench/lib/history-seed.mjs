// Seeds a migrated PostgreSQL database with a history of events, deliveries and attempts spread over a span
// of days ending now, generated in SQL (no HTTP), shaped as ingest and the delivery loop write them.
//
// It works on whatever schema the build under test's migrations made: rows go in through the parent tables'
// column names; a column this generator does not know is filled when it must be (a partition key: the row's
// time; a foreign-key column: the referenced row's value) and left to its default otherwise. Time-partitioned
// tables get partitions for the seeded span where none exist yet (the width and naming of the partitions the
// maintenance made). Secondary indexes are dropped for the load and recreated from their own definitions,
// checked identical afterwards; constraints (primary keys, unique keys, foreign keys) stay.
import pg from 'pg';

export const DAY_MS = 24 * 60 * 60 * 1000;
export const RULE_SET_HASH = 'benchhistory';
const CHECKOUTS = 1000;
const BUYERS = 200_000;
/** Where settled deliveries go: delivery_history where pending ones are kept apart, else deliveries. */
async function deliveriesTable(client) {
  return (await client.query("SELECT to_regclass('delivery_history') IS NOT NULL AS split")).rows[0].split ? 'delivery_history' : 'deliveries';
}

/** The spec's body, as the checkout service sends it (about 640 bytes); %s: id, checkout, wallet, e-mail, three times, token. */
const BODY = '{"event":"transfer:succeeded","result":{"id":"%s","checkoutId":"%s","walletAddress":"%s","walletType":"EMBEDDED","email":"%s","quantity":2,"paymentMethod":"BUY_WITH_CARD","networkFeeUsd":0.02,"totalPriceUsd":49.02,"createdAt":"%s","paymentCompletedAt":"%s","transferCompletedAt":"%s","claimedTokens":{"tokenIds":["%s","%s"],"transactionHashes":{"0x%s":["%s","%s"]}}}}';
const HEADERS = '{"host":"127.0.0.1:8080","connection":"keep-alive","content-type":"application/json","user-agent":"checkout-service/1.0","x-service-signature":"%s","accept":"*/*","content-length":"641"}';
const iso = (ms) => `to_char(to_timestamp((${ms}) / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"+00:00"')`;

/** Seeded values of event number `g.i` received at `x.at` (unix ms) by buyer `x.b`: every third event of a buyer is another checkout. */
export const eventValues = {
  transferId: (i) => `md5('t' || ${i})::uuid::text`,
  checkoutId: (i) => `md5('c' || (${i}) % ${CHECKOUTS})::uuid::text`,
  email: (b) => `'buyer' || ${b} || '@example.com'`,
  wallet: (b) => `'0x' || md5('w' || ${b}) || left(md5('v' || ${b}), 8)`,
};
const UNRECOGNISED = 'g.i % 100 = 0'; // 1 %: an event no rule or schema knows (transfer:refunded)

const EVENT_COLUMNS = {
  source: `'checkout'`,
  event: `CASE WHEN ${UNRECOGNISED} THEN 'transfer:refunded' ELSE 'transfer:succeeded' END`,
  transfer_id: eventValues.transferId('g.i'),
  checkout_id: eventValues.checkoutId('g.i'),
  email: eventValues.email('x.b'),
  wallet_address: eventValues.wallet('x.b'),
  validation: `CASE WHEN ${UNRECOGNISED} THEN 'unrecognised' ELSE 'valid' END`,
  received_at: 'x.at',
  last_received_at: 'x.at',
  received_count: '1',
  headers: `format('${HEADERS}', md5('s' || g.i) || md5('S' || g.i))`,
  body: `convert_to(CASE WHEN ${UNRECOGNISED} THEN format('{"event":"transfer:refunded","result":{"id":"%s","checkoutId":"%s"}}', ${eventValues.transferId('g.i')}, ${eventValues.checkoutId('g.i')})
    ELSE format('${BODY}', ${eventValues.transferId('g.i')}, ${eventValues.checkoutId('g.i')}, ${eventValues.wallet('x.b')}, ${eventValues.email('x.b')},
      ${iso('x.at - 11000')}, ${iso('x.at - 9000')}, ${iso('x.at - 300')}, 2 * g.i, 2 * g.i + 1, md5('h' || g.i) || md5('H' || g.i), 2 * g.i, 2 * g.i + 1) END, 'UTF8')`,
  rule_set_hash: `'${RULE_SET_HASH}'`,
  total_price_usd: `CASE WHEN ${UNRECOGNISED} THEN NULL ELSE 49.02 END`,
};
// One delivery per recognised event; 85 % delivered at once, 10 % after one retry, 5 % dead after three tries: 1.2 attempts each.
const DEAD = 'ev.id % 20 = 7';
const DELIVERY_COLUMNS = {
  event_id: 'ev.id',
  rule_id: `'forward'`,
  rule_set_hash: `'${RULE_SET_HASH}'`,
  origin: `'ingest'`,
  state: `CASE WHEN ${DEAD} THEN 'dead' ELSE 'delivered' END`,
  content_type: `'application/json'`,
  attempts: `CASE WHEN ${DEAD} THEN 3 WHEN ev.id % 10 = 3 THEN 2 ELSE 1 END`,
  last_status: `CASE WHEN ${DEAD} THEN 410 ELSE 200 END`,
  last_error: `CASE WHEN ${DEAD} THEN 'HTTP 410' END`,
  dead_reason: `CASE WHEN ${DEAD} THEN 'HTTP 410' END`,
  created_at: 'ev.received_at',
  updated_at: `ev.received_at + CASE WHEN ${DEAD} THEN 10070 WHEN ev.id % 10 = 3 THEN 5070 ELSE 70 END`,
};
const LAST = 'a.n = dl.attempts';
const ATTEMPT_COLUMNS = {
  delivery_id: 'dl.id',
  attempt: 'a.n',
  lease_token: `md5('l' || dl.id || '-' || a.n)::uuid::text`,
  started_at: 'dl.created_at + 25 + (a.n - 1) * 5000',
  duration_ms: `CASE WHEN ${LAST} THEN 23 ELSE 2500 END`,
  url_origin: `'https://fulfilment.example.com'`,
  status: `CASE WHEN NOT ${LAST} THEN 503 WHEN dl.state = 'dead' THEN 410 ELSE 200 END`,
  error_message: `CASE WHEN NOT ${LAST} THEN 'HTTP 503' WHEN dl.state = 'dead' THEN 'HTTP 410' END`,
  response_excerpt: `CASE WHEN NOT ${LAST} THEN '{"error":"unavailable"}' WHEN dl.state = 'dead' THEN '{"error":"gone"}' ELSE '{"ok":true}' END`,
  outcome: `CASE WHEN NOT ${LAST} THEN 'pending' WHEN dl.state = 'dead' THEN 'dead' ELSE 'delivered' END`,
};

async function columnsOf(client, table) {
  const { rows } = await client.query(
    `SELECT column_name AS name, data_type AS type, is_nullable = 'YES' AS nullable, column_default IS NOT NULL OR is_identity = 'YES' OR is_generated <> 'NEVER' AS defaulted
     FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  );
  return rows;
}

/** The single column a table is range-partitioned by, or null (not partitioned). */
async function partitionKey(client, table) {
  const def = (await client.query('SELECT pg_get_partkeydef($1::regclass) AS def', [table])).rows[0].def;
  if (!def) return null;
  const match = /^RANGE \((\w+)\)$/.exec(def);
  if (!match) throw new Error(`${table} is partitioned as "${def}": this generator seeds single-column RANGE partitions only`);
  return match[1];
}

/** Foreign-key columns of `table` that reference `parent`: column -> referenced column. */
async function foreignKeyColumns(client, table, parent) {
  const { rows } = await client.query(
    `SELECT a.attname AS col, r.attname AS ref FROM pg_constraint c
     CROSS JOIN LATERAL unnest(c.conkey, c.confkey) AS k(col, ref)
     JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.col
     JOIN pg_attribute r ON r.attrelid = c.confrelid AND r.attnum = k.ref
     WHERE c.contype = 'f' AND c.conrelid = $1::regclass AND c.confrelid = $2::regclass AND c.conparentid = 0`,
    [table, parent],
  );
  return new Map(rows.map((r) => [r.col, r.ref]));
}

/** A unix-ms SQL expression as a value of column type `type`. */
function asType(ms, type) {
  if (/^(bigint|integer|numeric|double precision)$/.test(type)) return ms;
  if (type === 'timestamp with time zone') return `to_timestamp((${ms}) / 1000.0)`;
  if (type === 'timestamp without time zone') return `(to_timestamp((${ms}) / 1000.0) AT TIME ZONE 'UTC')`;
  if (type === 'date') return `(to_timestamp((${ms}) / 1000.0) AT TIME ZONE 'UTC')::date`;
  throw new Error(`cannot write a time into a column of type ${type}`);
}

/**
 * The column list and value expressions of one table: the known columns it has, plus the partition key and
 * foreign-key columns it has that the generator does not know (`parentAlias`: the referenced rows' CTE).
 * `timeMs`: the row's time. Returns the parent's columns the expressions read, for its RETURNING.
 */
async function plan(client, table, known, { timeMs, parent, parentAlias, notes }) {
  const columns = await columnsOf(client, table);
  if (columns.length === 0) throw new Error(`table ${table} does not exist: was the database migrated?`);
  const byName = new Map(columns.map((c) => [c.name, c]));
  const key = await partitionKey(client, table);
  const fks = parent ? await foreignKeyColumns(client, table, parent) : new Map();
  const values = new Map();
  const reads = new Set();
  for (const [name, expr] of Object.entries(known)) {
    if (byName.has(name)) values.set(name, expr);
    else notes.push(`${table}.${name} is not in this schema: not written`);
  }
  for (const column of columns) {
    if (values.has(column.name)) continue;
    if (fks.has(column.name)) {
      values.set(column.name, `${parentAlias}.${fks.get(column.name)}`);
      reads.add(fks.get(column.name));
      notes.push(`${table}.${column.name}: the referenced ${parent}.${fks.get(column.name)}`);
    } else if (column.name === key) {
      values.set(column.name, asType(timeMs, column.type));
      notes.push(`${table}.${column.name} (partition key): the row's time`);
    } else if (!column.nullable && !column.defaulted) {
      throw new Error(`${table}.${column.name} is NOT NULL without a default and unknown to this generator: teach bench/lib/history-seed.mjs its value`);
    }
  }
  return { table, key, names: [...values.keys()], exprs: [...values.values()], reads, keyType: key && byName.get(key).type };
}

/** Bounds of a table's range partitions, unix ms ([] for none), with each partition's name. */
async function partitionBounds(client, table, keyType) {
  const { rows } = await client.query(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass`,
    [table],
  );
  const toMs = async (literal) => {
    if (/^-?\d+$/.test(literal)) return Number(literal);
    return Number((await client.query(`SELECT (extract(epoch FROM $1::${keyType === 'date' ? 'date' : 'timestamptz'}) * 1000)::bigint AS ms`, [literal])).rows[0].ms);
  };
  const bounds = [];
  for (const { name, bound } of rows) {
    const match = /FROM \((.+?)\) TO \((.+?)\)/.exec(bound);
    if (!match) continue; // DEFAULT: never where a time-partitioned history belongs
    const [from, to] = [match[1], match[2]].map((s) => s.replace(/^'|'$/g, ''));
    bounds.push({ name, from: from === 'MINVALUE' ? -Infinity : await toMs(from), to: to === 'MAXVALUE' ? Infinity : await toMs(to) });
  }
  return bounds.sort((a, b) => a.from - b.from);
}

/** How a bound appears in a partition's name: the number, or its UTC date/time in a common spelling. */
const spellings = (ms) => {
  const d = new Date(ms).toISOString();
  const [date, time] = [d.slice(0, 10), d.slice(11, 16)];
  return [String(ms), String(Math.floor(ms / 1000)), `${date.replaceAll('-', '')}${time.replace(':', '')}`, `${date.replaceAll('-', '')}_${time.replace(':', '')}`, date.replaceAll('-', '_'), date.replaceAll('-', ''), date];
};

/** A name for the partition starting at `ms`, spelled like `model`'s (starting at `modelFrom`), else `<table>_bench_<ms>`. */
function partitionName(table, model, modelFrom, ms) {
  const ours = spellings(ms);
  const at = spellings(modelFrom).findIndex((s) => model.includes(s));
  return at >= 0 ? model.replace(spellings(modelFrom)[at], ours[at]) : `${table}_bench_${ms}`;
}

/** Creates the range partitions missing between `fromMs` and `toMs`, as wide as the existing ones. */
async function coverSpan(client, { table, key, keyType }, fromMs, toMs, notes) {
  // A partition open at either end (e.g. one holding what was stored before the partitions) sizes nothing.
  const bounds = (await partitionBounds(client, table, keyType)).filter((b) => Number.isFinite(b.from) && Number.isFinite(b.to));
  if (bounds.length === 0) throw new Error(`${table} is partitioned but has no range partition to size new ones by`);
  const model = bounds.find((b) => Number.isFinite(b.from) && Number.isFinite(b.to));
  if (!model) return;
  const width = model.to - model.from;
  const literal = (ms) => (/^(bigint|integer|numeric)$/.test(keyType) ? String(ms) : `'${new Date(ms).toISOString()}'`);
  let created = 0;
  const create = async (from) => {
    const name = partitionName(table, model.name, model.from, from);
    await client.query(`CREATE TABLE ${name} PARTITION OF ${table} FOR VALUES FROM (${literal(from)}) TO (${literal(from + width)})`);
    created += 1;
  };
  for (let from = bounds[0].from - width; bounds[0].from > fromMs && from + width > fromMs; from -= width) await create(from);
  const top = bounds.at(-1).to;
  for (let from = top; from < toMs; from += width) await create(from);
  if (created) notes.push(`${table}: ${created} partitions created for the seeded span (by ${key}, ${Math.round(width / 3_600_000)} h each, named like ${model.name})`);
}

/** Secondary indexes of a table (not those behind a constraint): name and definition. */
async function secondaryIndexes(client, table) {
  const { rows } = await client.query(
    `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
     WHERE i.indrelid = $1::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid) ORDER BY 1`,
    [table],
  );
  return rows;
}

/**
 * Seeds `events` events received over the `days` days before `endMs`, with their deliveries and attempts, in
 * chunks of a day. `onProgress(done, total)` after each chunk. Returns notes on how the schema was met.
 */
export async function seedHistory(url, { events, days, endMs, extraSql, onProgress = () => {} }) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const notes = [];
  try {
    await client.query(`SET maintenance_work_mem = '512MB'`);
    const startMs = endMs - days * DAY_MS;
    const ev = await plan(client, 'events', EVENT_COLUMNS, { timeMs: 'x.at', notes });
    const deliveries = await deliveriesTable(client);
    const TABLES = ['events', deliveries, 'delivery_attempts'];
    const dl = await plan(client, deliveries, DELIVERY_COLUMNS, { timeMs: 'ev.received_at', parent: 'events', parentAlias: 'ev', notes });
    const at = await plan(client, 'delivery_attempts', ATTEMPT_COLUMNS, { timeMs: 'dl.created_at', parent: deliveries, parentAlias: 'dl', notes });
    for (const p of [ev, dl, at]) if (p.key) await coverSpan(client, p, startMs - DAY_MS, endMs + DAY_MS, notes);

    const indexes = new Map();
    for (const table of TABLES) {
      indexes.set(table, await secondaryIndexes(client, table));
      for (const { name } of indexes.get(table)) await client.query(`DROP INDEX ${name}`);
    }
    await client.query(`INSERT INTO rule_sets (hash, kind, rules, first_loaded_at) VALUES ($1, 'loaded', '[]', $2) ON CONFLICT DO NOTHING`, [RULE_SET_HASH, startMs]);
    // Constraints stay; the load does not fire their triggers (every reference is right by construction).
    await client.query(`SET session_replication_role = replica`);
    const evReturning = [...new Set(['id', 'received_at', 'validation', ...dl.reads])];
    const dlReturning = [...new Set(['id', 'created_at', 'attempts', 'state', ...at.reads])];
    const sql = `
      WITH ev AS (
        INSERT INTO events (${ev.names.join(', ')})
        SELECT ${ev.exprs.join(', ')}
        FROM generate_series($1::bigint, $2::bigint - 1) AS g(i)
        CROSS JOIN LATERAL (SELECT $3::bigint + (g.i * $4::double precision)::bigint AS at, (g.i * 7919) % ${BUYERS} AS b) x
        RETURNING ${evReturning.join(', ')}),
      dl AS (
        INSERT INTO ${deliveries} (${dl.names.join(', ')})
        SELECT ${dl.exprs.join(', ')} FROM ev WHERE ev.validation = 'valid'
        RETURNING ${dlReturning.join(', ')})
      INSERT INTO delivery_attempts (${at.names.join(', ')})
      SELECT ${at.exprs.join(', ')} FROM dl CROSS JOIN LATERAL generate_series(1, dl.attempts) AS a(n)`;
    const step = (days * DAY_MS) / events;
    for (let day = 0; day < days; day++) {
      const [from, to] = [Math.floor((events * day) / days), Math.floor((events * (day + 1)) / days)];
      await client.query(sql, [from, to, startMs, step]);
      onProgress(to, events);
    }
    await client.query(`SET session_replication_role = DEFAULT`);
    if (extraSql) await client.query(extraSql);
    for (const table of TABLES) {
      for (const { def } of indexes.get(table)) await client.query(def.replace(' ON ONLY ', ' ON '));
      const after = await secondaryIndexes(client, table);
      if (JSON.stringify(after) !== JSON.stringify(indexes.get(table))) throw new Error(`${table}: recreated indexes differ from the migrations' ones`);
    }
    for (const table of TABLES) await client.query(`VACUUM (ANALYZE) ${table}`);
    await client.query('CHECKPOINT');
    return notes;
  } finally {
    await client.end();
  }
}

/** Tables (and their partitions) with their data and index bytes and estimated rows, largest first. */
export async function tableSizes(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT t.relname AS name,
         sum(pg_table_size(p.relid))::bigint AS table_bytes, sum(pg_indexes_size(p.relid))::bigint AS index_bytes,
         (sum(greatest(c.reltuples, 0)) FILTER (WHERE p.isleaf))::bigint AS rows, count(*) FILTER (WHERE p.isleaf)::int AS leaves
       FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
       -- pg_partition_tree has no rows for a plain table: the table is then its own one leaf
       CROSS JOIN LATERAL (SELECT relid, isleaf FROM pg_partition_tree(t.oid) UNION ALL SELECT t.oid, true WHERE t.relkind = 'r') p
       JOIN pg_class c ON c.oid = p.relid
       WHERE t.relkind IN ('r', 'p') AND NOT t.relispartition
       GROUP BY t.relname ORDER BY sum(pg_total_relation_size(p.relid)) DESC`,
    );
    const database = Number((await client.query('SELECT pg_database_size(current_database()) AS b')).rows[0].b);
    return { tables: rows.map((r) => ({ name: r.name, tableBytes: Number(r.table_bytes), indexBytes: Number(r.index_bytes), rows: Number(r.rows), partitions: r.leaves })), database };
  } finally {
    await client.end();
  }
}
