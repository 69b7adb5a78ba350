// Node.js driver smoke test: connect, ping, buildInfo, listDatabases, error shape.
// Usage: node smoke.mjs mongodb://127.0.0.1:PORT/
import assert from 'node:assert/strict';
import { MongoClient, MongoServerError } from 'mongodb';

const uri = process.argv[2];
const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000, directConnection: true });
await client.connect();
const admin = client.db('admin');
assert.equal((await admin.command({ ping: 1 })).ok, 1);
const info = await admin.command({ buildInfo: 1 });
assert.ok(Number(info.version.split('.')[0]) >= 7, info.version);
const { databases, totalSize } = await admin.command({ listDatabases: 1 });
assert.deepEqual(databases, []);
assert.equal(Number(totalSize), 0);
await assert.rejects(client.db('app').command({ frobnicate: 1 }), (error) => {
  assert.ok(error instanceof MongoServerError);
  assert.equal(error.code, 59);
  assert.equal(error.codeName, 'CommandNotFound');
  return true;
});
await client.close();
console.log(`node driver: ok (server ${info.version})`);
