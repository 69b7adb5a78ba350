// Node.js driver smoke test: connect, ping, buildInfo, error shape, then a CRUD round.
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
const { databases } = await admin.command({ listDatabases: 1 });
assert.ok(!databases.some((d) => d.name === 'smoke_node'));
await assert.rejects(client.db('app').command({ frobnicate: 1 }), (error) => {
  assert.ok(error instanceof MongoServerError);
  assert.equal(error.code, 59);
  assert.equal(error.codeName, 'CommandNotFound');
  return true;
});

// A CRUD round through the driver's helpers.
const db = client.db('smoke_node');
const people = db.collection('people');
await people.drop().catch(() => {});
const docs = Array.from({ length: 300 }, (_, i) => ({ _id: i, name: `p${i}`, age: 20 + (i % 50) }));
assert.equal((await people.insertMany(docs)).insertedCount, 300);
assert.equal(await people.countDocuments({}), 300);
assert.equal(await people.estimatedDocumentCount(), 300);
assert.equal((await people.findOne({ _id: 7 })).name, 'p7');
assert.equal((await people.find({}, { batchSize: 40 }).toArray()).length, 300);
const top = await people.find({ age: { $gte: 60 } }).project({ name: 1 }).sort({ _id: -1 }).limit(5).toArray();
assert.deepEqual(top.map((d) => d._id), [299, 298, 297, 296, 295]);
assert.equal((await people.updateOne({ _id: 1 }, { $set: { tag: 'x' } })).modifiedCount, 1);
assert.equal((await people.updateMany({ age: 20 }, { $inc: { age: 100 } })).modifiedCount, 6);
assert.equal((await people.replaceOne({ _id: 1000 }, { name: 'new' }, { upsert: true })).upsertedId, 1000);
await assert.rejects(people.insertOne({ _id: 1 }), (error) => {
  assert.equal(error.code, 11000);
  return true;
});
const after = await people.findOneAndUpdate({ _id: 2 }, { $set: { seen: true } }, { returnDocument: 'after' });
assert.equal((after.value ?? after).seen, true);
assert.equal((await people.deleteOne({ _id: 3 })).deletedCount, 1);
assert.equal((await people.deleteMany({ age: { $gte: 100 } })).deletedCount, 6);
const groups = await people.aggregate([{ $group: { _id: '$age', n: { $sum: 1 } } }]).toArray();
assert.equal(groups.reduce((sum, g) => sum + g.n, 0), await people.countDocuments({}));
assert.ok((await db.listCollections().toArray()).some((c) => c.name === 'people'));
await people.drop();

await client.close();
console.log(`node driver: ok (server ${info.version})`);
