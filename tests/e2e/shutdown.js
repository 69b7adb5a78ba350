// db.shutdownServer() from mongosh (issue 22), on a server of its own: the server answers,
// stops cleanly (the xtask checks its exit status and log), and mongosh sees the
// connection go.
const admin = db.getSiblingDB('admin');
admin.getSiblingDB('smoke_shutdown').t.insertOne({ _id: 1 });
try {
  const reply = admin.shutdownServer({ timeoutSecs: 5 });
  print('shutdownServer ok=' + reply.ok);
} catch (error) {
  // mongod closes the connection before a reply may arrive; mongosh reports that.
  print('shutdownServer closed=' + /closed|ECONNRESET|network|connection/i.test(String(error)));
}
