// The driver side of `cargo xtask gates`: workloads through the Node.js driver against a
// running multiforadb, printing one `name<TAB>value` row per figure on stdout (progress
// goes to stderr). The xtask owns the server (start, RSS, SIGKILL, SIGTERM, reopen); this
// script only talks to it.
//
// Usage: node bench.mjs <phase> <uri> [--name value ...]
//   table       the benchmark table: sequential inserts, bulk load, reads, updates, deletes
//   concurrent  durable insertOne throughput with 1, 4, 8, 16, 32 clients
//   load        a large collection by insertMany, then 200 acknowledged insertOne
//   verify      after a SIGKILL: the count, the 200 last writes and the last document
//   churn       delete-half-and-refill rounds, then random $set growth; file size / live data
//
// Documents: {_id: i (int), k: i % 1000, p: (i * 2654435761) % 1e6, payload: string} of
// exactly --doc-size BSON bytes. The payload is words from a small vocabulary (compressible,
// about 2x with LZ4, like the predecessor's); 64 distinct payloads, picked by i % 64, so a
// reader can check any document's payload from its _id alone.
//
// The driver is installed in tests/e2e (bash tests/e2e/setup.sh); it is resolved from there.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

const require = createRequire(new URL('../e2e/package.json', import.meta.url));
const { MongoClient, BSON } = require('mongodb');

const [phase, uri, ...rest] = process.argv.slice(2);
const opts = {};
for (let i = 0; i < rest.length; i += 2) {
  opts[rest[i].replace(/^--/, '')] = rest[i + 1];
}
const num = (name, fallback) => (opts[name] === undefined ? fallback : Number(opts[name]));
const DOC_SIZE = num('doc-size', 16384);
const SEED = num('seed', 1);

// ---- output -----------------------------------------------------------------------------

function fmt(value) {
  if (typeof value !== 'number') return String(value);
  if (!Number.isFinite(value)) return 'n/a';
  if (Number.isInteger(value)) return String(value);
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 1 : abs >= 10 ? 2 : abs >= 1 ? 3 : 4;
  return value.toFixed(digits);
}
function row(name, value) {
  process.stdout.write(`${name}\t${fmt(value)}\n`);
}
function note(text) {
  process.stderr.write(`  [${phase}] ${text}\n`);
}

// ---- documents --------------------------------------------------------------------------

function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const WORDS = (
  'the of and to in is was for on that with as by at from his her which or be an are had ' +
  'not have this but were they their one all been has its more when will would who so no ' +
  'out up into there what about can if some time other than them only then could also ' +
  'first new after two like our most over such these many even where well way down before ' +
  'through back years because each people must through just under state world made still ' +
  'account order record value index page block cursor batch commit durable'
).split(' ');

const POOL_SIZE = 64;
// Each pooled string is twice the base payload, so $set growth can take a longer slice.
const BASE = BSON.calculateObjectSize({ _id: 0, k: 0, p: 0, payload: '' });
const PAYLOAD = Math.max(0, DOC_SIZE - BASE);
const POOL = (() => {
  const rand = prng(SEED);
  const pool = [];
  for (let n = 0; n < POOL_SIZE; n++) {
    const parts = [];
    let length = 0;
    while (length < 2 * PAYLOAD + 1) {
      const word = WORDS[Math.floor(rand() * rand() * WORDS.length)];
      parts.push(word);
      length += word.length + 1;
    }
    pool.push(parts.join(' ').slice(0, 2 * PAYLOAD));
  }
  return pool;
})();

const payloadOf = (i) => POOL[i % POOL_SIZE].slice(0, PAYLOAD);
const pOf = (i) => Number((BigInt(i) * 2654435761n) % 1000000n);
function makeDoc(i) {
  return { _id: i, k: i % 1000, p: pOf(i), payload: payloadOf(i) };
}
{
  const size = BSON.calculateObjectSize(makeDoc(1));
  if (size !== DOC_SIZE) throw new Error(`document is ${size} bytes, wanted ${DOC_SIZE}`);
}

// ---- timing -----------------------------------------------------------------------------

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
// Runs `fn(i)` `n` times one after the other; the single latencies in ms.
async function latencies(n, fn) {
  const times = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn(i);
    times.push(performance.now() - start);
  }
  return times;
}
// The median of `latencies(n, fn)`.
async function latency(n, fn) {
  return median(await latencies(n, fn));
}

async function connect(extra = {}) {
  const client = new MongoClient(uri, {
    directConnection: true,
    serverSelectionTimeoutMS: 10000,
    ...extra,
  });
  await client.connect();
  return client;
}

// Loads documents [from, to) by insertMany in chunks; returns the BSON bytes sent.
async function bulkLoad(coll, from, to, progressEvery = 0) {
  const CHUNK = Math.max(1, Math.floor((32 << 20) / DOC_SIZE));
  let bytes = 0;
  let next = progressEvery;
  for (let start = from; start < to; start += CHUNK) {
    const docs = [];
    for (let i = start; i < Math.min(to, start + CHUNK); i++) docs.push(makeDoc(i));
    await coll.insertMany(docs, { ordered: true });
    bytes += docs.length * DOC_SIZE;
    if (progressEvery && bytes >= next) {
      note(`loaded ${(bytes / 1e9).toFixed(2)} GB`);
      next += progressEvery;
    }
  }
  return bytes;
}

async function liveBytes(db) {
  const stats = await db.command({ dbStats: 1 });
  // The bytes the records take as stored: each document compressed alone (issue 18).
  let stored = 0;
  for (const { name } of await db.listCollections({}, { nameOnly: true }).toArray()) {
    const coll = await db.command({ collStats: name });
    stored += Number(coll.multiforadb?.storedBytes ?? coll.size);
  }
  return { bytes: Number(stats.dataSize), objects: Number(stats.objects), stored };
}

// ---- phases -----------------------------------------------------------------------------

async function table() {
  const docs = num('docs', 65536);
  const reps = num('reps', 5);
  const client = await connect();
  const admin = client.db('admin');
  const db = client.db('gates');
  await db.dropDatabase();
  const rand = prng(SEED + 7);
  const randomId = () => Math.floor(rand() * docs);

  // The ping floor: measured first and last, the lower kept (as the xtask does with its floors).
  const ping = () => latency(500, () => admin.command({ ping: 1 }));
  for (let i = 0; i < 100; i++) await admin.command({ ping: 1 });
  const pingFirst = await ping();

  const seq = db.collection('seq');
  for (let i = 0; i < 10; i++) await seq.insertOne(makeDoc(1000000 + i));
  const inserts = await latencies(200, (i) => seq.insertOne(makeDoc(i)));
  row('insertOne_seq_x200_ms', median(inserts));
  // The mean shows the tail the median hides (stalls behind checkpoints and log growth).
  row('insertOne_seq_x200_mean_ms', inserts.reduce((a, b) => a + b, 0) / inserts.length);
  await seq.drop();
  // Index maintenance: the same inserts into a collection without secondary indexes and one
  // with three, interleaved so both see the same machine.
  const plain = db.collection('seq_plain');
  const indexed3 = db.collection('seq_3idx');
  await plain.insertOne(makeDoc(2000000));
  await indexed3.createIndexes([{ key: { k: 1 } }, { key: { p: 1 } }, { key: { p: -1, k: 1 } }]);
  await indexed3.insertOne(makeDoc(2000000));
  const plainTimes = [];
  const indexedTimes = [];
  for (let i = 0; i < 200; i++) {
    let t = performance.now();
    await plain.insertOne(makeDoc(i));
    plainTimes.push(performance.now() - t);
    t = performance.now();
    await indexed3.insertOne(makeDoc(i));
    indexedTimes.push(performance.now() - t);
  }
  row('insertOne_seq_plain_x200_ms', median(plainTimes));
  row('insertOne_seq_3idx_x200_ms', median(indexedTimes));
  await plain.drop();
  await indexed3.drop();
  // Long enough to cross a checkpoint (the server checkpoints after 64 MiB of log): the tail
  // a writer sees when one runs.
  const longBytes = num('long-bytes', 0);
  if (longBytes > 0) {
    const n = Math.ceil(longBytes / DOC_SIZE);
    note(`${n} sequential inserts`);
    const long = db.collection('long');
    const times = (await latencies(n, (i) => long.insertOne(makeDoc(i)))).sort((a, b) => a - b);
    row('insertOne_seq_long_count', n);
    row('insertOne_seq_long_p99_ms', times[Math.floor(0.99 * (n - 1))]);
    row('insertOne_seq_long_max_ms', times[n - 1]);
    row('insertOne_seq_long_mean_ms', times.reduce((a, b) => a + b, 0) / n);
    await long.drop();
  } else {
    for (const name of ['count', 'p99_ms', 'max_ms', 'mean_ms']) row(`insertOne_seq_long_${name}`, 'n/a');
  }

  const coll = db.collection('bench');
  note(`bulk load of ${docs} x ${DOC_SIZE} B`);
  const start = performance.now();
  const bytes = await bulkLoad(coll, 0, docs);
  const seconds = (performance.now() - start) / 1000;
  row('insertMany_MBps', bytes / seconds / 1e6);

  // One unindexed range count first: the build is compared with it, both over a warm file
  // (the load's last checkpoint has run by then).
  await coll.countDocuments({ p: { $gte: 250000, $lt: 350000 } });
  let indexed = false;
  try {
    // The first build is also the first read of the freshly loaded file through the
    // server's map (each page's first touch is a page fault): reported alone. The gate's
    // figure is the median of rebuilds, each followed by the unindexed range count it is
    // compared with, so both medians come from the same minutes of a shared machine.
    const t = performance.now();
    await coll.createIndex({ k: 1 });
    row('createIndex_k_first_ms', performance.now() - t);
    const builds = [];
    const counts = [];
    for (let i = 0; i < Math.max(9, reps); i++) {
      await coll.dropIndex('k_1');
      const b = performance.now();
      await coll.createIndex({ k: 1 });
      builds.push(performance.now() - b);
      const c = performance.now();
      await coll.countDocuments({ p: { $gte: 250000, $lt: 350000 } });
      counts.push(performance.now() - c);
    }
    row('createIndex_k_ms', median(builds));
    row('range_count_beside_builds_ms', median(counts));
    indexed = true;
  } catch (error) {
    note(`createIndex: ${error.code} ${error.codeName}: not built yet`);
    row('createIndex_k_first_ms', 'n/a');
    row('createIndex_k_ms', 'n/a');
    row('range_count_beside_builds_ms', 'n/a');
  }

  const count = await coll.countDocuments({});
  if (count !== docs) throw new Error(`countDocuments ${count}, expected ${docs}`);
  row('countDocuments_ms', await latency(reps, () => coll.countDocuments({})));
  row(
    'findOne_id_ms',
    await latency(200, async () => {
      const id = randomId();
      const doc = await coll.findOne({ _id: id });
      if (doc === null || doc.k !== id % 1000) throw new Error(`findOne(${id}) wrong`);
    }),
  );
  // Issue 17's rows, each beside the documents its plan examines (a regression to a scan
  // shows as a number): a range sorted through the index with a limit, one indexed
  // equality, and an `$or` of two (a walk per branch).
  const examined = async (cursor) =>
    (await cursor.explain('executionStats')).executionStats.totalDocsExamined;
  const ranged = () => coll.find({ k: { $gte: 100, $lt: 200 } }).sort({ k: 1 }).limit(20);
  const one = () => coll.find({ k: 5 });
  const either = () => coll.find({ $or: [{ k: 5 }, { k: 6 }] });
  if (indexed) {
    row('findOne_k_indexed_ms', await latency(200, () => coll.findOne({ k: randomId() % 1000 })));
    row(
      'find_k_range_sort_limit20_ms',
      await latency(reps * 4, async () => {
        const got = await ranged().toArray();
        if (got.length !== 20 || got[0].k !== 100) throw new Error('range sort limit wrong');
      }),
    );
    row('find_k_range_sort_limit20_docs_examined', await examined(ranged()));
    const single = (await one().toArray()).length;
    row('find_k_equality_ms', await latency(reps * 2, () => one().toArray()));
    row('find_k_equality_docs_examined', await examined(one()));
    row(
      'find_k_or2_ms',
      await latency(reps * 2, async () => {
        const got = await either().toArray();
        if (got.length < single) throw new Error('$or found too little');
      }),
    );
    row('find_k_or2_docs_examined', await examined(either()));
  } else {
    for (const name of [
      'findOne_k_indexed_ms',
      'find_k_range_sort_limit20_ms',
      'find_k_range_sort_limit20_docs_examined',
      'find_k_equality_ms',
      'find_k_equality_docs_examined',
      'find_k_or2_ms',
      'find_k_or2_docs_examined',
    ]) {
      row(name, 'n/a');
    }
  }
  const range = { p: { $gte: 250000, $lt: 350000 } };
  const inRange = await coll.countDocuments(range);
  note(`range scan matches ${inRange} documents`);
  row('range_count_unindexed_ms', await latency(reps, () => coll.countDocuments(range)));
  row(
    'sort_id_desc_limit20_ms',
    await latency(reps * 4, async () => {
      const top = await coll.find({}).sort({ _id: -1 }).limit(20).toArray();
      if (top.length !== 20 || top[0]._id !== docs - 1) throw new Error('sort+limit wrong');
    }),
  );
  // The same reads left as BSON by the driver (`raw: true`): the server's share, without
  // the client's decoding into objects (PLAN #19: the decoded rows are client-bound).
  row(
    'sort_id_desc_limit20_raw_ms',
    await latency(reps * 4, async () => {
      const top = await coll.find({}, { raw: true }).sort({ _id: -1 }).limit(20).toArray();
      if (top.length !== 20) throw new Error('raw sort+limit wrong');
    }),
  );
  row(
    'projection_limit1000_raw_ms',
    await latency(reps * 2, async () => {
      const got = await coll
        .find({}, { projection: { k: 1, p: 1 }, raw: true })
        .limit(1000)
        .toArray();
      if (got.length !== Math.min(1000, docs)) throw new Error('raw projection+limit wrong');
    }),
  );
  row(
    'projection_limit1000_ms',
    await latency(reps * 2, async () => {
      const got = await coll.find({}, { projection: { k: 1, p: 1 } }).limit(1000).toArray();
      if (got.length !== Math.min(1000, docs)) throw new Error('projection+limit wrong');
    }),
  );
  row(
    'aggregate_group_k_ms',
    await latency(reps, async () => {
      const groups = await coll.aggregate([{ $group: { _id: '$k', n: { $sum: 1 } } }]).toArray();
      if (groups.length !== Math.min(1000, docs)) throw new Error('$group wrong');
    }),
  );
  row(
    'updateOne_id_x50_ms',
    await latency(50, async () => {
      const r = await coll.updateOne({ _id: randomId() }, { $inc: { u: 1 } });
      if (r.modifiedCount !== 1) throw new Error('updateOne modified nothing');
    }),
  );
  // More calls than the read rows: whether a checkpoint's data-file sync overlaps a call
  // decides its time, so a median of five swung between runs.
  let matched = 0;
  row(
    'updateMany_k_ms',
    await latency(Math.max(25, reps), async (i) => {
      const r = await coll.updateMany({ k: 7 + i }, { $inc: { u: 1 } });
      matched = r.matchedCount;
    }),
  );
  note(`updateMany matched ${matched} documents per call`);
  row('updateMany_k_matched', matched);
  row(
    'deleteOne_insertOne_ms',
    await latency(50, async () => {
      const id = randomId();
      const r = await coll.deleteOne({ _id: id });
      if (r.deletedCount !== 1) throw new Error(`deleteOne(${id}) deleted nothing`);
      await coll.insertOne(makeDoc(id));
    }),
  );

  const pingLast = await ping();
  note(`ping ${pingFirst.toFixed(3)} ms first, ${pingLast.toFixed(3)} ms last`);
  row('ping_ms', Math.min(pingFirst, pingLast));
  const live = await liveBytes(db);
  row('live_data_bytes', live.bytes);
  row('live_documents', live.objects);
  row('stored_bytes', live.stored);
  await client.close();
}

async function concurrent() {
  const levels = (opts.clients ?? '1,4,8,16,32').split(',').map(Number);
  const seconds = num('seconds', 2);
  const reps = num('reps', 3);
  let nextId = 0;
  for (const clients of levels) {
    const client = await connect({ maxPoolSize: clients, minPoolSize: clients });
    const coll = client.db('gates').collection('concurrent');
    const admin = client.db('admin');
    // Open every connection before the clock starts.
    await Promise.all(Array.from({ length: clients * 4 }, () => admin.command({ ping: 1 })));
    const rates = [];
    for (let rep = 0; rep < reps; rep++) {
      let done = 0;
      const deadline = performance.now() + seconds * 1000;
      const start = performance.now();
      await Promise.all(
        Array.from({ length: clients }, async () => {
          while (performance.now() < deadline) {
            await coll.insertOne(makeDoc(nextId++));
            done += 1;
          }
        }),
      );
      rates.push(done / ((performance.now() - start) / 1000));
      await coll.drop();
    }
    note(`${clients} clients: ${rates.map((r) => r.toFixed(0)).join(', ')} docs/s`);
    row(`insertOne_c${clients}_docs_per_s`, median(rates));
    await client.close();
  }
}

async function load() {
  const bytesWanted = num('bytes', 64 << 20);
  const docs = Math.max(1, Math.floor(bytesWanted / DOC_SIZE));
  const client = await connect();
  const db = client.db('gates');
  await db.dropDatabase();
  const coll = db.collection('large');
  note(`loading ${docs} x ${DOC_SIZE} B`);
  const start = performance.now();
  const bytes = await bulkLoad(coll, 0, docs, 1e9);
  row('large_insertMany_MBps', bytes / ((performance.now() - start) / 1000) / 1e6);
  // The last writes before the kill: 200 single durable inserts, each acknowledged.
  for (let i = docs; i < docs + 200; i++) await coll.insertOne(makeDoc(i));
  row('large_documents_acked', docs + 200);
  row('large_last_id', docs + 199);
  row('large_live_bytes', (docs + 200) * DOC_SIZE);
  await client.close();
}

async function verify() {
  const expected = num('count', 0);
  const lastId = num('last-id', expected - 1);
  const client = await connect();
  const coll = client.db('gates').collection('large');
  let t = performance.now();
  const count = await coll.countDocuments({});
  row('large_count_after_kill_ms', performance.now() - t);
  row('large_count_matches_acked', count === expected ? 'yes' : `NO (${count} of ${expected})`);
  const tail = await coll.countDocuments({ _id: { $gt: lastId - 200, $lte: lastId } });
  row('large_last200_acked_present', tail);
  t = performance.now();
  const last = await coll.findOne({ _id: lastId });
  row('large_findOne_last_ms', performance.now() - t);
  const intact =
    last !== null &&
    last.payload === payloadOf(lastId) &&
    last.k === lastId % 1000 &&
    BSON.calculateObjectSize(last) === DOC_SIZE;
  row('large_last_doc_intact', intact ? 'yes' : 'NO');
  await client.close();
}

async function churn() {
  const docs = num('docs', 4000);
  const deleteRounds = num('delete-rounds', 6);
  const setRounds = num('set-rounds', 5);
  const dbFile = opts['db-file'];
  const client = await connect();
  const db = client.db('gates');
  await db.dropDatabase();
  const coll = db.collection('churn');
  const rand = prng(SEED + 99);
  const BATCH = 500;
  const ratio = async (label) => {
    const live = await liveBytes(db);
    if (live.objects !== docs) throw new Error(`churn: ${live.objects} documents, expected ${docs}`);
    const file = fs.statSync(dbFile).size;
    let wal = 0;
    try {
      wal = fs.statSync(`${dbFile}-wal`).size;
    } catch {
      wal = 0;
    }
    row(`${label}_file_over_live`, file / live.bytes);
    note(`${label}: file ${(file / 1e6).toFixed(1)} MB, live ${(live.bytes / 1e6).toFixed(1)} MB, ` +
      `${(file / live.bytes).toFixed(3)}x, wal ${(wal / 1e6).toFixed(1)} MB`);
    return file / live.bytes;
  };
  await bulkLoad(coll, 0, docs);
  let ids = Array.from({ length: docs }, (_, i) => i);
  let nextId = docs;
  await ratio('churn_loaded');
  const series = [];
  for (let round = 1; round <= deleteRounds; round++) {
    // Delete a random half (point deletes in unordered batches), then refill with new ids.
    for (let i = ids.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [ids[i], ids[j]] = [ids[j], ids[i]];
    }
    const gone = ids.slice(0, docs >> 1);
    ids = ids.slice(docs >> 1);
    for (let i = 0; i < gone.length; i += BATCH) {
      const ops = gone.slice(i, i + BATCH).map((id) => ({ deleteOne: { filter: { _id: id } } }));
      const r = await coll.bulkWrite(ops, { ordered: false });
      if (r.deletedCount !== ops.length) throw new Error('churn: delete missed documents');
    }
    const fresh = [];
    for (let i = 0; i < gone.length; i++) fresh.push(nextId++);
    for (let i = 0; i < fresh.length; i += BATCH) {
      await coll.insertMany(fresh.slice(i, i + BATCH).map(makeDoc), { ordered: false });
    }
    ids = ids.concat(fresh);
    series.push(await ratio(`churn_delete_round${round}`));
  }
  // Random $set growth: each round rewrites as many payloads as the collection holds, each to
  // a random length between half and one and a half of the original.
  for (let round = 1; round <= setRounds; round++) {
    for (let done = 0; done < docs; done += BATCH) {
      const ops = [];
      for (let i = 0; i < Math.min(BATCH, docs - done); i++) {
        const id = ids[Math.floor(rand() * ids.length)];
        const length = Math.floor(PAYLOAD * (0.5 + rand()));
        const payload = POOL[Math.floor(rand() * POOL_SIZE)].slice(0, length);
        ops.push({ updateOne: { filter: { _id: id }, update: { $set: { payload } } } });
      }
      await coll.bulkWrite(ops, { ordered: false });
    }
    series.push(await ratio(`churn_set_round${round}`));
  }
  row('churn_live_bytes', (await liveBytes(db)).bytes);
  const last = series.length - 1;
  if (last >= 1) row('churn_last_round_change_pct', ((series[last] / series[last - 1]) - 1) * 100);
  await client.close();
}

// A blocking sort of the whole table (1 GiB at the default size) with allowDiskUse: the
// server spills past its 100 MiB limit; the gate reads the server's memory around it.
async function spill() {
  const client = await connect();
  const coll = client.db('gates').collection('bench');
  const expected = await coll.estimatedDocumentCount();
  const t = performance.now();
  const cursor = coll.aggregate([{ $sort: { k: -1, _id: 1 } }], { allowDiskUse: true });
  let n = 0;
  let prev = null;
  let ordered = true;
  for await (const d of cursor) {
    if (prev && (d.k > prev.k || (d.k === prev.k && d._id < prev._id))) ordered = false;
    prev = { k: d.k, _id: d._id };
    n++;
  }
  row('spill_sort_ms', performance.now() - t);
  row('spill_sort_in_order', ordered && n === expected ? 'yes' : `NO (${n} of ${expected})`);
  try {
    await coll.aggregate([{ $sort: { k: -1 } }]).toArray();
    row('spill_sort_without_allowDiskUse', 'NO: answered');
  } catch (e) {
    row('spill_sort_without_allowDiskUse', e.code === 292 ? 'refused_292' : `NO (${e.code})`);
  }
  await client.close();
}

// ---- tls: ping over TLS against plain ping on one preferTLS server ------------------------

async function tls() {
  const ca = opts.ca;
  if (!ca) throw new Error('tls: --ca <file> is required');
  const plain = await connect();
  const secure = await connect({ tls: true, tlsCAFile: ca });
  const pingOn = (client) => () => client.db('admin').command({ ping: 1 });
  const plainTimes = [];
  const tlsTimes = [];
  for (let round = 0; round < 5; round++) {
    plainTimes.push(...(await latencies(200, pingOn(plain))));
    tlsTimes.push(...(await latencies(200, pingOn(secure))));
  }
  row('ping_plain_ms', median(plainTimes));
  row('ping_tls_ms', median(tlsTimes));
  await plain.close();
  await secure.close();
}

const phases = { table, concurrent, load, verify, churn, spill, tls };
if (!phases[phase] || !uri) {
  process.stderr.write(`usage: node bench.mjs <${Object.keys(phases).join('|')}> <uri> [--opt v]\n`);
  process.exit(2);
}
await phases[phase]();
