// mongosh's admin helpers against a running server (issue 22): serverStatus, coll.stats(),
// currentOp, killOp, fsyncLock + a copy of the database file + fsyncUnlock, the profiler
// and `show profile` (db.shutdownServer() runs in shutdown.js, on a server of its own). The xtask
// then opens the copy with a second server and counts its documents.
// Environment: MFDB_DB (the server's file), MFDB_COPY (where to copy it).
const d = db.getSiblingDB('smoke_admin_sh');
const c = d.items;
c.drop();
c.insertMany(Array.from({ length: 100 }, (_, i) => ({ _id: i, k: i % 10 })));
c.createIndex({ k: 1 });
// cursor.min()/max() with a hint, then $indexStats (mongosh's `c.aggregate` helper).
const ranged = c.find().hint({ k: 1 }).min({ k: 3 }).max({ k: 5 }).toArray();
print('min/max n=' + ranged.length + ' first=' + ranged[0].k + ' last=' + ranged[ranged.length - 1].k);
const istats = c.aggregate([{ $indexStats: {} }]).toArray();
print('indexStats k_1 ops=' + istats.find(s => s.name === 'k_1').accesses.ops);
const ss = db.serverStatus();
print('serverStatus ok=' + ss.ok + ' inserts=' + (ss.opcounters.insert >= 100) +
      ' engine=' + ss.storageEngine.name);
const st = c.stats();
print('stats count=' + st.count + ' nindexes=' + st.nindexes + ' sized=' +
      (c.totalSize() > 0 && c.dataSize() > 0 && c.storageSize() > 0));
const lat = c.latencyStats().toArray ? c.latencyStats().toArray() : c.latencyStats();
print('latencyStats writes=' + (lat[0].latencyStats.writes.ops >= 1));
const ops = db.currentOp().inprog;
print('currentOp listed=' + ops.some(o => o.command && o.command.currentOp !== undefined ||
                                        (o.command && o.command.aggregate === 1)));
const k = db.killOp(2147483000);
print('killOp ok=' + k.ok);
const lock = db.fsyncLock();
print('fsyncLock count=' + lock.lockCount);
require('fs').copyFileSync(process.env.MFDB_DB, process.env.MFDB_COPY);
const un = db.fsyncUnlock();
print('fsyncUnlock count=' + un.lockCount);
c.insertOne({ _id: 1000 });
print('after unlock count=' + c.countDocuments({}));
const prof = d.setProfilingLevel(2);
print('setProfilingLevel was=' + prof.was + ' now=' + d.getProfilingStatus().was);
c.findOne({ _id: 5 });
const profiled = d.system.profile.find({ op: 'query', ns: 'smoke_admin_sh.items' }).toArray();
print('profiled query=' + (profiled.length >= 1 && profiled[0].nreturned === 1));
// `show profile` (of the shell's current database, hence the `use`): mongosh counts
// system.profile, then reads its newest entries (`{millis: {$gt: 0}}`, sorted by
// `$natural: -1`, limit 5).
use('smoke_admin_sh');
const shown = show('profile');
print('show profile type=' + shown.type + ' count=' + (shown.value.count >= 1) +
      ' read=' + (shown.value.result === undefined || Array.isArray(shown.value.result)));
d.setProfilingLevel(0);
