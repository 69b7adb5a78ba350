// The Node.js driver against a server started with --auth (issue 20), after auth.py has
// created its users: SCRAM-SHA-256 (the driver's default, speculative) and roles.
// Usage: node auth.mjs mongodb://127.0.0.1:PORT/[?options]
// The URI's options (tls=true&tlsCAFile=... for the TLS round) apply to every client.
import { MongoClient } from 'mongodb';

const uri = process.argv[2];
const host = uri.split('//')[1].split('/')[0];
const options = uri.includes('?') ? `&${uri.split('?')[1]}` : '';
const root = new MongoClient(`mongodb://root:rootpw@${host}/?authSource=admin${options}`);
await root.connect();
const status = await root.db('admin').command({ connectionStatus: 1 });
const who = status.authInfo.authenticatedUsers.map((u) => `${u.user}@${u.db}`).join(',');
if (who !== 'root@admin') throw new Error(`connectionStatus: ${JSON.stringify(status)}`);
const reader = new MongoClient(`mongodb://reader:r@${host}/?authSource=app${options}`);
await reader.connect();
const doc = await reader.db('app').collection('items').findOne({ _id: 1 });
if (doc.n !== 1) throw new Error(`reader read ${JSON.stringify(doc)}`);
let code = null;
try {
  await reader.db('app').collection('items').deleteOne({ _id: 1 });
} catch (error) {
  code = error.code;
}
if (code !== 13) throw new Error(`a read-only delete answered ${code}`);
const wrong = new MongoClient(`mongodb://reader:bad@${host}/?authSource=app${options}`, {
  serverSelectionTimeoutMS: 5000,
});
let failed = false;
try {
  await wrong.connect();
  await wrong.db('app').collection('items').findOne({});
} catch (error) {
  failed = error.code === 18 || /Authentication failed/.test(String(error.message));
}
if (!failed) throw new Error('a wrong password must fail');
const opts = await root.db('admin').command({ getCmdLineOpts: 1 });
const tls = opts.parsed.net?.tls?.mode;
await Promise.all([root.close(), reader.close(), wrong.close()]);
console.log(`auth ok: ${who}, tls=${tls}, read-only delete 13, wrong password refused`);
