// Issue #19's side-by-side harness for the read rows of `cargo xtask gates` (the same
// documents, queries and medians as tests/gates/bench.mjs), against a server started on a
// database file loaded once, so two binaries can be compared on the same data in one run:
//   node reads.mjs load <uri>            65,536 x 16 KiB documents into gates.bench
//   node reads.mjs reads <uri>           ping, findOne, range count, sort+limit, projection, $group
//   node reads.mjs reads <uri> --only loop --what range --seconds 5   one row in a loop (profiling)
// ab.sh runs it for several binaries, alternating. Not part of the build.
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

const require = createRequire(new URL('../../tests/e2e/package.json', import.meta.url));
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
  return { bytes: Number(stats.dataSize), objects: Number(stats.objects) };
}


async function load() {
  const docs = num('docs', 65536);
  const client = await connect();
  const db = client.db('gates');
  await db.dropDatabase();
  const coll = db.collection('bench');
  const t = performance.now();
  const bytes = await bulkLoad(coll, 0, docs);
  row('insertMany_MBps', bytes / ((performance.now() - t) / 1000) / 1e6);
  await client.close();
}

async function reads() {
  const docs = num('docs', 65536);
  const reps = num('reps', 7);
  const only = (opts.only ?? 'ping,range,sort,proj,group,findone').split(',');
  const client = await connect();
  const admin = client.db('admin');
  const coll = client.db('gates').collection('bench');
  const range = { p: { $gte: 250000, $lt: 350000 } };
  // warm-up: map and verify every page once
  await coll.countDocuments(range);
  await coll.aggregate([{ $group: { _id: '$k', n: { $sum: 1 } } }]).toArray();
  for (let i = 0; i < 100; i++) await admin.command({ ping: 1 });
  const rand = prng(SEED + 7);
  if (only.includes('ping')) row('ping_ms', await latency(500, () => admin.command({ ping: 1 })));
  if (only.includes('findone')) row('findOne_id_ms', await latency(200, () => coll.findOne({ _id: Math.floor(rand() * docs) })));
  if (only.includes('range')) row('range_count_unindexed_ms', await latency(reps, () => coll.countDocuments(range)));
  if (only.includes('sort')) row('sort_id_desc_limit20_ms', await latency(reps * 4, async () => {
    const top = await coll.find({}).sort({ _id: -1 }).limit(20).toArray();
    if (top.length !== 20 || top[0]._id !== docs - 1) throw new Error('sort+limit wrong');
  }));
  if (only.includes('proj')) row('projection_limit1000_ms', await latency(reps * 2, async () => {
    const got = await coll.find({}, { projection: { k: 1, p: 1 } }).limit(1000).toArray();
    if (got.length !== 1000) throw new Error('projection+limit wrong');
  }));
  if (only.includes('group')) row('aggregate_group_k_ms', await latency(reps, async () => {
    const groups = await coll.aggregate([{ $group: { _id: '$k', n: { $sum: 1 } } }]).toArray();
    if (groups.length !== 1000) throw new Error('$group wrong');
  }));
  if (only.includes('loop')) {
    // for profiling: repeat one row for --seconds
    const what = opts.what;
    const end = performance.now() + num('seconds', 10) * 1000;
    const fns = {
      range: () => coll.countDocuments(range),
      group: () => coll.aggregate([{ $group: { _id: '$k', n: { $sum: 1 } } }]).toArray(),
      proj: () => coll.find({}, { projection: { k: 1, p: 1 } }).limit(1000).toArray(),
      sort: () => coll.find({}).sort({ _id: -1 }).limit(20).toArray(),
      findone: () => coll.findOne({ _id: Math.floor(rand() * docs) }),
      updmany: () => coll.updateMany({ k: 7 }, { $inc: { u: 1 } }),
    };
    let n = 0;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    while (performance.now() < end) { await fns[what](); n++; }
    const c1 = process.cpuUsage(c0);
    row('loop_' + what, n);
    row('loop_wall_ms_per', (performance.now() - t0) / n);
    row('loop_client_cpu_ms_per', (c1.user + c1.system) / 1000 / n);
  }
  await client.close();
}

const phases = { load, reads };
await phases[phase]();
