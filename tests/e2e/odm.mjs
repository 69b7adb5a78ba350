// Mongoose smoke test, as an app would use it: a schema with Decimal128 money, the
// money aggregate (a $sum of Decimal128 prices grouped by customer), schema indexes
// (unique, TTL, compound; syncIndexes), and a transaction,
// which a standalone must refuse (IllegalOperation), never apply and keep.
// Usage: node odm.mjs mongodb://127.0.0.1:PORT/
import assert from 'node:assert/strict';
import mongoose from 'mongoose';

const uri = process.argv[2];
await mongoose.connect(uri, { dbName: 'smoke_mongoose', serverSelectionTimeoutMS: 5000 });
const Order = mongoose.model('Order', new mongoose.Schema({
  customer: String,
  price: mongoose.Schema.Types.Decimal128,
}));
await Order.deleteMany({});
const prices = { ann: ['20.99', '0.01', '100.10'], bob: ['0.10', '0.20'] };
for (const [customer, list] of Object.entries(prices)) {
  for (const price of list) await Order.create({ customer, price });
}
const totals = await Order.aggregate([
  { $group: { _id: '$customer', total: { $sum: '$price' }, avg: { $avg: '$price' } } },
  { $sort: { _id: 1 } },
]);
// Decimal128 in, Decimal128 out, exact: 0.1 + 0.2 is 0.30, never 0.30000000000000004.
assert.deepEqual(totals.map((t) => [t._id, t.total.toString()]), [['ann', '121.10'], ['bob', '0.30']]);
assert.equal(totals[0].total._bsontype, 'Decimal128');
assert.equal(totals[1].avg.toString(), '0.15');

// allowDiskUse as Mongoose sets it: a $group past the server's group memory (set small
// here) answers with it, and is refused with 292 without it.
const admin = mongoose.connection.db.admin();
const limit = 'internalDocumentSourceGroupMaxMemoryBytes';
const was = (await admin.command({ getParameter: 1, [limit]: 1 }))[limit];
await admin.command({ setParameter: 1, [limit]: 100 });
try {
  const byPrice = [{ $group: { _id: '$price', n: { $sum: 1 } } }];
  await assert.rejects(Order.aggregate(byPrice), (error) => error.code === 292);
  const groups = await Order.aggregate(byPrice).allowDiskUse(true);
  assert.equal(groups.length, 5);
} finally {
  await admin.command({ setParameter: 1, [limit]: was });
}

// Indexes as a schema declares them: Mongoose builds them at init (autoIndex), a duplicate
// is E11000 with its key, a query uses the compound one, and syncIndexes drops what the
// schema no longer declares.
const memberSchema = new mongoose.Schema({
  email: { type: String, unique: true },
  team: String,
  age: { type: Number, index: true },
  joined: { type: Date, expires: 3600 },
});
memberSchema.index({ team: 1, age: -1 });
const Member = mongoose.model('Member', memberSchema);
await Member.init();
const names = (await Member.listIndexes()).map((i) => i.name).sort();
assert.deepEqual(names, ['_id_', 'age_1', 'email_1', 'joined_1', 'team_1_age_-1']);
const ttl = (await Member.listIndexes()).find((i) => i.name === 'joined_1');
assert.equal(ttl.expireAfterSeconds, 3600);
for (let i = 0; i < 20; i++) {
  await Member.create({ email: `m${i}@x`, team: 'ab'[i % 2], age: 20 + i, joined: new Date() });
}
await assert.rejects(Member.create({ email: 'm5@x', team: 'a', age: 1 }), (error) => {
  assert.equal(error.code, 11000);
  assert.deepEqual(error.keyValue, { email: 'm5@x' });
  return true;
});
const older = await Member.find({ team: 'a', age: { $gte: 30 } }).sort({ age: -1 });
assert.deepEqual(older.map((m) => m.age), [38, 36, 34, 32, 30]);
const plan = await Member.find({ team: 'a', age: { $gte: 30 } }).sort({ age: -1 }).explain();
let stage = plan.queryPlanner.winningPlan;
while (stage.inputStage) stage = stage.inputStage;
assert.equal(stage.stage, 'IXSCAN');
assert.equal(stage.indexName, 'team_1_age_-1');
await Member.collection.createIndex({ team: 1 }, { name: 'team_extra' });
const dropped = await Member.syncIndexes();
assert.deepEqual(dropped, ['team_extra']);
assert.deepEqual(await Member.diffIndexes(), { toDrop: [], toCreate: [] });

// A transaction is refused, and nothing it wrote is kept: on a standalone with 20
// IllegalOperation, as mongod; on a replica set with 238 until transactions land (#44).
const member = (await mongoose.connection.db.admin().command({ hello: 1 })).setName !== undefined;
const session = await mongoose.startSession();
await assert.rejects(
  session.withTransaction(async () => {
    await Order.create([{ customer: 'carl', price: '1.00' }], { session });
  }),
  (error) => {
    // The server answers 20 IllegalOperation ("Transaction numbers are only allowed on a
    // replica set member or mongos"), which the Node driver rewords, as for mongod.
    const expected = member
      ? /transactions are not supported yet/
      : /does not support retryable writes|Transaction numbers/;
    assert.match(error.message, expected);
    return true;
  },
);
await session.endSession();
assert.equal(await Order.countDocuments({ customer: 'carl' }), 0);

await mongoose.connection.db.dropDatabase();
await mongoose.disconnect();
console.log(`mongoose ${mongoose.version}: ok`);
