// Node.js driver smoke test: connect, ping, buildInfo, error shape, then a CRUD round.
// Usage: node smoke.mjs mongodb://127.0.0.1:PORT/
import assert from 'node:assert/strict';
import { GridFSBucket, MongoClient, MongoServerError } from 'mongodb';

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

// An index round: createIndex (unique, compound), listIndexes, a unique violation with its
// keyPattern/keyValue, queries the index serves (equality, $in, range, hint), dropIndex.
const users = db.collection('users');
await users.drop().catch(() => {});
assert.equal(await users.createIndex({ email: 1 }, { unique: true }), 'email_1');
assert.equal(await users.createIndex({ age: 1, name: -1 }), 'age_1_name_-1');
await users.insertMany(Array.from({ length: 50 }, (_, i) => ({ _id: i, email: `u${i}@x`, age: i % 10, name: `n${i}` })));
const names = (await users.listIndexes().toArray()).map((i) => i.name).sort();
assert.deepEqual(names, ['_id_', 'age_1_name_-1', 'email_1']);
await assert.rejects(users.insertOne({ email: 'u7@x' }), (error) => {
  assert.equal(error.code, 11000);
  assert.deepEqual(error.keyPattern, { email: 1 });
  assert.deepEqual(error.keyValue, { email: 'u7@x' });
  return true;
});
assert.equal((await users.findOne({ email: 'u7@x' }))._id, 7);
assert.equal(await users.countDocuments({ age: { $in: [1, 2] } }), 10);
const ranged = await users.find({ age: { $gte: 8 } }).hint('age_1_name_-1').toArray();
// In index order: age ascending, then name descending (as strings).
assert.deepEqual(ranged.map((d) => d.name), ['n8', 'n48', 'n38', 'n28', 'n18', 'n9', 'n49', 'n39', 'n29', 'n19']);
await assert.rejects(users.find({}).hint('nope').toArray(), (error) => error.code === 2);
assert.equal((await users.updateMany({ age: 3 }, { $set: { seen: true } })).modifiedCount, 5);
assert.equal((await users.deleteMany({ age: 4 })).deletedCount, 5);
await users.dropIndex('age_1_name_-1');
assert.deepEqual((await users.listIndexes().toArray()).map((i) => i.name).sort(), ['_id_', 'email_1']);
await users.drop();

// GridFS: the bucket creates its indexes first (a unique one on fs.chunks), then upload,
// download, list, delete.
const bucket = new GridFSBucket(db, { chunkSizeBytes: 1024 });
const payload = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 251));
const fileId = await new Promise((resolve, reject) => {
  const upload = bucket.openUploadStream('blob.bin');
  upload.once('finish', () => resolve(upload.id));
  upload.once('error', reject);
  upload.end(payload);
});
const chunks = [];
for await (const chunk of bucket.openDownloadStream(fileId)) chunks.push(chunk);
assert.ok(Buffer.concat(chunks).equals(payload));
assert.equal((await bucket.find({ filename: 'blob.bin' }).toArray()).length, 1);
const chunkIndexes = (await db.collection('fs.chunks').listIndexes().toArray()).map((i) => i.name);
assert.ok(chunkIndexes.includes('files_id_1_n_1'), chunkIndexes.join(','));
await bucket.delete(fileId);
assert.equal(await db.collection('fs.chunks').countDocuments({}), 0);
await db.dropDatabase();

await client.close();
console.log(`node driver: ok (server ${info.version})`);
